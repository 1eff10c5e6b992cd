"""Morgan fingerprints against RDKit's own bit vectors and Tanimoto similarity.

The references are independent of our code path: RDKit's ``ExplicitBitVect``
on-bits (from ``GetFingerprint``, one molecule at a time) and
``DataStructs.TanimotoSimilarity``, plus cases checkable by hand.
"""

import warnings

import numpy as np
import pytest

import diversity_profiles as dp

Chem = pytest.importorskip("rdkit.Chem")
from rdkit import DataStructs  # noqa: E402
from rdkit.Chem import rdFingerprintGenerator  # noqa: E402

from diversity_profiles import molecules  # noqa: E402
from diversity_profiles.featurisers.molecules import InvalidSmilesWarning  # noqa: E402

#: Drug-like molecules with rings, charges, stereo, heteroatoms and a salt.
SMILES = [
    "CC(=O)Oc1ccccc1C(=O)O",  # aspirin
    "CN1C=NC2=C1C(=O)N(C(=O)N2C)C",  # caffeine
    "CC(C)Cc1ccc(cc1)[C@@H](C)C(=O)O",  # (S)-ibuprofen
    "CC(=O)Nc1ccc(O)cc1",  # paracetamol
    "C[N+](C)(C)CCO.[Cl-]",  # choline chloride
    "O=C(O)c1ccccc1O",  # salicylic acid
    "c1ccc2ccccc2c1",  # naphthalene
    "CCN(CC)CCNC(=O)c1ccc(N)cc1",  # procainamide
]


def rdkit_bitvects(smiles, radius=2, n_bits=2048):
    gen = rdFingerprintGenerator.GetMorganGenerator(radius=radius, fpSize=n_bits)
    return [gen.GetFingerprint(Chem.MolFromSmiles(s)) for s in smiles]


@pytest.mark.parametrize(("radius", "n_bits"), [(2, 2048), (0, 64), (3, 1000), (1, 7)])
def test_bits_are_rdkits_on_bits(radius, n_bits):
    X = molecules.fingerprints(SMILES, radius, n_bits, progress=False)
    assert X.dtype == np.uint8
    assert X.shape == (len(SMILES), n_bits)
    for row, bv in zip(X, rdkit_bitvects(SMILES, radius, n_bits), strict=True):
        assert np.flatnonzero(row).tolist() == list(bv.GetOnBits())


def test_tanimoto_matches_rdkit_for_every_pair():
    X = molecules.fingerprints(SMILES, progress=False)
    D = dp.pairwise_distances(X, "tanimoto")
    bvs = rdkit_bitvects(SMILES)
    for i in range(len(SMILES)):
        for j in range(len(SMILES)):
            expected = 1.0 - DataStructs.TanimotoSimilarity(bvs[i], bvs[j])
            assert D[i, j] == pytest.approx(expected, abs=1e-12), (SMILES[i], SMILES[j])


def test_hand_checkable_distances():
    # The same molecule written twice is at distance 0; benzene (aromatic CH only)
    # and ethanol (sp3 C and O) share no atom environment, so they are at distance 1.
    X = molecules.fingerprints(["CCO", "OCC", "c1ccccc1", "C1=CC=CC=C1"], progress=False)
    D = dp.pairwise_distances(X, "tanimoto")
    assert D[0, 1] == 0.0 and D[2, 3] == 0.0
    assert D[0, 2] == 1.0
    # Benzene at radius 0: one bit (every atom is the same aromatic CH).
    assert molecules.fingerprints(["c1ccccc1"], radius=0, progress=False).sum() == 1


def test_batches_and_processes_agree_with_one_call(monkeypatch):
    many = SMILES * 40  # 320 molecules
    whole = molecules.fingerprints(many, progress=False)
    monkeypatch.setattr(molecules, "_BATCH", 7)  # forces 46 batches, a ragged last one
    assert np.array_equal(molecules.fingerprints(many, progress=False), whole)
    assert np.array_equal(molecules.fingerprints(many, progress=False, n_jobs=2), whole)
    # Indices of invalid entries count from the start of the input, not of their batch.
    with pytest.warns(InvalidSmilesWarning, match=r"\[20\] 'C1CC'"):
        _, kept = molecules.fingerprints(
            [*many[:20], "C1CC", *many[20:]], on_invalid="drop", return_kept=True, progress=False
        )
    assert kept.tolist() == [*range(20), *range(21, len(many) + 1)]


def test_invalid_smiles_error_names_index_and_value():
    bad = ["CCO", "C1CC", "CCO", "not a molecule", "", None, *["c1ccc"] * 12]
    with pytest.raises(ValueError) as info:
        molecules.fingerprints(bad, progress=False)
    msg = str(info.value)
    assert "'smiles' argument of fingerprints" in msg
    assert "16 of 18 SMILES" in msg
    assert "[1] 'C1CC'" in msg and "[3] 'not a molecule'" in msg
    assert "[4] ''" in msg and "[5] None" in msg
    assert "and 6 more" in msg  # only the first 10 are quoted
    assert "on_invalid='drop'" in msg


def test_invalid_smiles_are_silent_on_stderr(capfd):
    with pytest.raises(ValueError):
        molecules.fingerprints(["C1CC", "c1ccc"], progress=False)
    assert capfd.readouterr().err == ""  # RDKit's own log lines are blocked


def test_drop_mode_warns_and_returns_kept_indices():
    smiles = ["CCO", "C1CC", "c1ccccc1", "xyz"]
    with pytest.warns(InvalidSmilesWarning, match=r"dropped 2 of 4 .*\[1\] 'C1CC', \[3\] 'xyz'"):
        X, kept = molecules.fingerprints(
            smiles, on_invalid="drop", return_kept=True, progress=False
        )
    assert kept.tolist() == [0, 2]
    assert np.array_equal(X, molecules.fingerprints(["CCO", "c1ccccc1"], progress=False))


def test_drop_mode_without_invalid_is_quiet_and_nothing_left_raises():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        X, kept = molecules.fingerprints(
            ["CCO", "CC"], on_invalid="drop", return_kept=True, progress=False
        )
    assert kept.tolist() == [0, 1] and X.shape[0] == 2
    with pytest.raises(ValueError, match="no SMILES that RDKit can parse"):
        molecules.fingerprints(["C1CC", ""], on_invalid="drop", progress=False)


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"radius": -1}, r"'radius' argument of fingerprints must be an int >= 0\. Got -1"),
        ({"radius": 2.5}, r"'radius' .* Got 2\.5"),
        ({"radius": True}, r"'radius' .* Got True"),
        ({"n_bits": 0}, r"'n_bits' argument of fingerprints must be an int >= 1\. Got 0"),
        ({"n_bits": "2048"}, r"'n_bits' .* Got '2048'"),
        ({"on_invalid": "skip"}, r"'on_invalid' .* one of 'raise', 'drop'\. Got 'skip'"),
        ({"n_jobs": 0}, r"'n_jobs' .* positive int or -1"),
    ],
)
def test_bad_arguments(kwargs, match):
    with pytest.raises(ValueError, match=match):
        molecules.fingerprints(["CCO"], progress=False, **kwargs)


def test_a_single_string_is_refused():
    with pytest.raises(TypeError, match=r"not a single string\. Wrap it in a list: \['CCO'\]"):
        molecules.fingerprints("CCO")


def test_scaffolds_by_hand_and_drop():
    assert molecules.scaffolds(["CCc1ccccc1", "CCCC", "Cc1ccc(Oc2ccccc2)cc1"]) == [
        "c1ccccc1",
        "",  # acyclic: no ring system
        "c1ccc(Oc2ccccc2)cc1",
    ]
    with pytest.warns(InvalidSmilesWarning, match=r"\[0\] 'C1CC'"):
        out, kept = molecules.scaffolds(["C1CC", "c1ccncc1C"], on_invalid="drop", return_kept=True)
    assert out == ["c1ccncc1"] and kept.tolist() == [1]
    with pytest.raises(ValueError, match=r"'smiles' argument of scaffolds .*\[0\] 'C1CC'"):
        molecules.scaffolds(["C1CC"])


def test_profiles_record_the_representation():
    sets = {"A": SMILES[:4], "B": SMILES[4:]}
    tree = molecules.profiles(sets, families=["average_distance", "richness"], progress=False)
    assert tree.dp.conditions == ["morgan-r2-2048/tanimoto"]
    node = tree["morgan-r2-2048/tanimoto"]
    assert node.attrs["representation_kind"] == "Morgan fingerprint"
    assert node.attrs["representation_radius"] == 2
    assert node.attrs["representation_n_bits"] == 2048
    import rdkit

    assert node.attrs["representation_rdkit_version"] == rdkit.__version__
    assert "representation_invalid_smiles_dropped" not in node.attrs
    # The average distance is the mean of RDKit's Tanimoto distances over pairs.
    bvs = rdkit_bitvects(SMILES[:4])
    pairs = [1 - DataStructs.TanimotoSimilarity(a, b) for k, a in enumerate(bvs) for b in bvs[:k]]
    assert float(node["average_distance"].sel(set="A")) == pytest.approx(np.mean(pairs))


def test_profiles_drop_mode_records_counts_per_set():
    sets = {"A": ["CCO", "C1CC", "CCN"], "B": ["c1ccccc1", "Cc1ccccc1"]}
    with pytest.warns(InvalidSmilesWarning, match=r"Set 'A' in the 'sets' argument"):
        tree = molecules.profiles(
            sets, radius=1, n_bits=512, on_invalid="drop", families="richness", progress=False
        )
    node = tree["morgan-r1-512/tanimoto"]
    assert node.attrs["representation_invalid_smiles_dropped"] == "A: 1, B: 0"
    assert node.attrs["representation_n_invalid_smiles_dropped"] == 1
    assert node["n_samples"].values.tolist() == [2, 2]


def test_profiles_errors_name_the_set_and_fixed_arguments():
    with pytest.raises(ValueError, match=r"Set 'B' in the 'sets' argument of molecules\.profiles"):
        molecules.profiles({"A": ["CCO", "CC"], "B": ["CC", "C1CC"]}, progress=False)
    with pytest.raises(TypeError, match=r"Got distance='cosine'; for another named distance"):
        molecules.profiles({"A": ["CCO", "CC"]}, distance="cosine")
    with pytest.raises(TypeError, match="sets representation itself"):
        molecules.profiles({"A": ["CCO", "CC"]}, representation="x")
    with pytest.raises(TypeError, match="non-empty dict"):
        molecules.profiles(["CCO", "CC"])


def test_profiles_take_a_callable_distance_or_similarity_on_fingerprints():
    from scipy.spatial.distance import pdist

    sets = {"A": SMILES[:4], "B": SMILES[4:]}
    bits = {
        k: molecules.fingerprints(v, radius=1, n_bits=512, progress=False) for k, v in sets.items()
    }

    def dice(a, b):  # the Dice dissimilarity of two bit vectors, written out
        both = float(np.sum((a > 0) & (b > 0)))
        return 1.0 - 2.0 * both / float(np.sum(a > 0) + np.sum(b > 0))

    tree = molecules.profiles(
        sets, radius=1, n_bits=512, distance=dice, families="average_distance", progress=False
    )
    node = tree["morgan-r1-512/precomputed"]
    assert node.attrs["distance_callable"].endswith("dice")
    assert node.attrs["representation_kind"] == "Morgan fingerprint"
    for label in sets:  # scipy's Dice on the same fingerprints: an independent reference
        ref = pdist(bits[label].astype(bool), "dice").mean()
        assert float(node["average_distance"].sel(set=label)) == pytest.approx(ref, rel=1e-12)
    # A similarity callable alone: Vendi on it, 1 - K the distance; here Tanimoto written out.
    tanimoto = lambda a, b: float(np.sum((a > 0) & (b > 0)) / np.sum((a > 0) | (b > 0)))  # noqa: E731
    sim = molecules.profiles(
        sets, radius=1, n_bits=512, similarities=tanimoto, families="vendi", progress=False
    )["morgan-r1-512/precomputed"]
    named = molecules.profiles(sets, radius=1, n_bits=512, families="vendi", progress=False)[
        "morgan-r1-512/tanimoto"
    ]
    assert np.allclose(sim["vendi"].values, named["vendi"].values, rtol=1e-10)
