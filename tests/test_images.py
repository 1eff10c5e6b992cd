"""diversity_profiles.images: resizing against closed forms, extractors against explicit
matrix products, and the errors."""

import subprocess
import sys

import numpy as np
import pytest

import diversity_profiles as dp
from diversity_profiles import images

Image = pytest.importorskip("PIL.Image")


def checkerboard(h, w, cell=1):
    rows, cols = np.indices((h, w)) // cell
    return ((rows + cols) % 2).astype(np.float64)


# --- pixel_vectors ------------------------------------------------------------------------


@pytest.mark.parametrize("resample", images.RESAMPLING)
def test_constant_image_stays_constant(resample):
    rgb = np.empty((10, 7, 3), dtype=np.uint8)
    rgb[...] = (200, 100, 50)
    X = images.pixel_vectors(rgb[None], size=(3, 5), resample=resample)
    assert X.shape == (1, 3 * 5 * 3)
    np.testing.assert_allclose(
        X.reshape(3, 5, 3), np.broadcast_to([200, 100, 50], (3, 5, 3)) / 255, atol=1e-6
    )


def test_box_halves_a_checkerboard_to_grey():
    # each output pixel averages one 2 × 2 block: two 0s and two 1s
    X = images.pixel_vectors(checkerboard(64, 64)[None], size=(32, 32))
    np.testing.assert_allclose(X, 0.5, atol=1e-7)


def test_box_keeps_a_coarse_checkerboard():
    # 2 × 2 cells shrunk by 2: each block is one cell, the board survives at 4 × 4
    X = images.pixel_vectors(checkerboard(8, 8, cell=2)[None], size=4)
    np.testing.assert_allclose(X.reshape(4, 4), checkerboard(4, 4), atol=1e-7)


def test_box_averages_blocks_of_three():
    rng = np.random.default_rng(0)
    img = rng.random((6, 9))
    blocks = img.reshape(2, 3, 3, 3).mean(axis=(1, 3))
    X = images.pixel_vectors(img[None], size=(2, 3))
    np.testing.assert_allclose(X.reshape(2, 3), blocks, atol=1e-6)


def test_flatten_order_and_scaling_without_resize():
    img = np.arange(2 * 2 * 3, dtype=np.uint8).reshape(2, 2, 3) * 20
    X = images.pixel_vectors(img[None], size=(2, 2))
    # row 0 col 0 (R, G, B), row 0 col 1 (R, G, B), ...
    np.testing.assert_allclose(X[0], np.arange(12) * 20 / 255, atol=1e-7)


def test_grayscale_is_luma():
    rgb = np.zeros((2, 4, 4, 3))
    rgb[0] = (1.0, 0.0, 0.0)
    rgb[1] = (0.2, 0.4, 0.6)
    X = images.pixel_vectors(rgb, size=(2, 2), grayscale=True)
    assert X.shape == (2, 4)
    np.testing.assert_allclose(X[0], 0.299, atol=1e-6)
    np.testing.assert_allclose(X[1], 0.299 * 0.2 + 0.587 * 0.4 + 0.114 * 0.6, atol=1e-6)


def test_pil_images_and_files_agree_with_arrays(tmp_path):
    rng = np.random.default_rng(1)
    arrays = [rng.integers(0, 256, (12, 10, 3), dtype=np.uint8) for _ in range(3)]
    paths = []
    for i, arr in enumerate(arrays):
        paths.append(tmp_path / f"img{i}.png")
        Image.fromarray(arr).save(paths[-1])
    expected = images.pixel_vectors(np.stack(arrays), size=(6, 5))
    from_pil = images.pixel_vectors([Image.fromarray(a) for a in arrays], size=(6, 5))
    from_files = images.pixel_vectors([str(p) for p in paths[:2]] + [paths[2]], size=(6, 5))
    np.testing.assert_array_equal(from_pil, expected)
    np.testing.assert_array_equal(from_files, expected)


def test_modes_alpha_palette_and_sixteen_bit():
    rgba = np.zeros((4, 4, 4), dtype=np.uint8)
    rgba[..., :3] = (255, 0, 51)
    rgba[..., 3] = 7
    X = images.pixel_vectors([Image.fromarray(rgba, "RGBA"), rgba], size=(4, 4))
    np.testing.assert_allclose(X, np.tile([1.0, 0.0, 0.2], (2, 16)), atol=1e-7)
    palette = Image.fromarray(rgba[..., :3]).convert("P")
    np.testing.assert_allclose(images.pixel_vectors([palette], size=4), X[:1], atol=1e-7)
    deep = Image.fromarray(np.full((3, 3), 65535, dtype=np.uint16))
    np.testing.assert_allclose(images.pixel_vectors([deep], size=3), 1.0)


def test_images_of_different_sizes():
    X = images.pixel_vectors([np.ones((8, 8)), np.zeros((5, 9))], size=(2, 2))
    np.testing.assert_allclose(X, [[1, 1, 1, 1], [0, 0, 0, 0]], atol=1e-7)


def test_pixel_errors(tmp_path):
    with pytest.raises(ValueError, match=r"mix channel counts: images\[1\] is greyscale"):
        images.pixel_vectors([np.zeros((4, 4, 3)), np.zeros((4, 4))])
    assert images.pixel_vectors([np.zeros((4, 4, 3)), np.zeros((4, 4))], grayscale=True).shape
    bad = np.zeros((3, 4, 4))
    bad[2, 1, 1] = np.nan
    with pytest.raises(ValueError, match=r"images\[2\] contains NaN"):
        images.pixel_vectors(bad)
    with pytest.raises(ValueError, match=r"outside \[0, 1\].*x / 255"):
        images.pixel_vectors(np.full((1, 4, 4), 255.0))
    broken = tmp_path / "broken.png"
    broken.write_text("not an image")
    with pytest.raises(ValueError, match=r"could not read images\[1\] = '.*broken\.png'"):
        images.pixel_vectors([np.zeros((4, 4)), broken])
    with pytest.raises(ValueError, match=r"could not read images\[0\] = '.*missing\.png'"):
        images.pixel_vectors([tmp_path / "missing.png"])
    with pytest.raises(ValueError, match="'images' argument of pixel_vectors is empty"):
        images.pixel_vectors([])
    with pytest.raises(TypeError, match="wrap a single image in a list"):
        images.pixel_vectors("one.png")
    with pytest.raises(ValueError, match=r"'size' argument of pixel_vectors.*Got \(0, 3\)"):
        images.pixel_vectors(np.zeros((1, 4, 4)), size=(0, 3))
    with pytest.raises(ValueError, match="'resample' argument of pixel_vectors must be one of"):
        images.pixel_vectors(np.zeros((1, 4, 4)), resample="area")


def test_import_loads_numpy_only():
    code = (
        "import sys, diversity_profiles.images; "
        "print(sorted(m for m in ('PIL', 'torch', 'scipy') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_missing_pillow_names_the_extra(monkeypatch):
    monkeypatch.setitem(sys.modules, "PIL", None)
    with pytest.raises(ImportError, match=r'pip install "diversity-profiles\[images\]"'):
        images.pixel_vectors(np.zeros((1, 4, 4)), size=2)


# --- features -------------------------------------------------------------------------------


def test_torch_linear_against_matrix_product():
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(2)
    batch = rng.random((7, 3, 2, 3))  # n, H, W, C
    W = rng.standard_normal((5, 18))
    b = rng.standard_normal(5)
    seen = []

    class Probe(torch.nn.Module):
        def forward(self, x):
            seen.append((tuple(x.shape), torch.is_grad_enabled(), self.training))
            return x

    linear = torch.nn.Linear(18, 5)
    with torch.no_grad():
        linear.weight.copy_(torch.from_numpy(W))
        linear.bias.copy_(torch.from_numpy(b))
    # Dropout would change the output unless the module runs in eval mode
    model = torch.nn.Sequential(Probe(), torch.nn.Flatten(), torch.nn.Dropout(0.5), linear)
    model.train()
    F = images.features(batch, model, batch_size=3, progress=False)
    # the module sees NCHW: flatten channel-major
    expected = batch.transpose(0, 3, 1, 2).reshape(7, 18) @ W.T + b
    np.testing.assert_allclose(F, expected, rtol=1e-5, atol=1e-5)
    assert [s[0] for s in seen] == [(3, 3, 3, 2), (3, 3, 3, 2), (1, 3, 3, 2)]
    assert not any(grad or training for _, grad, training in seen)
    assert model.training  # restored


def test_callable_hook_gets_nhwc_batches():
    batches = []

    def channel_means(x):
        batches.append(x.shape)
        return x.mean(axis=(1, 2))

    imgs = np.zeros((5, 4, 6, 3))
    imgs[:, :, :, 1] = np.linspace(0, 1, 5)[:, None, None]
    F = images.features(imgs, channel_means, batch_size=2, progress=False)
    np.testing.assert_allclose(F, np.c_[np.zeros(5), np.linspace(0, 1, 5), np.zeros(5)])
    assert batches == [(2, 4, 6, 3), (2, 4, 6, 3), (1, 4, 6, 3)]


def test_callable_may_return_a_tensor_and_resize_first():
    torch = pytest.importorskip("torch")
    F = images.features(
        np.ones((2, 8, 8)), lambda x: torch.from_numpy(x).flatten(1), size=2, progress=False
    )
    np.testing.assert_allclose(F, np.ones((2, 4)))


@pytest.mark.parametrize(
    ("extractor", "match"),
    [
        (lambda x: x, r"\(n, d\) array.*shape \(2, 4, 4, 1\).*Flatten"),
        (lambda x: x.reshape(len(x), -1)[:1], r"batch of 2 it returned shape \(1, 16\)"),
        (lambda x: np.full((len(x), 2), np.nan), "NaN or inf"),
        (lambda x: np.zeros((len(x), 1 + int(x.sum() > 0))), "same dimension for every batch"),
    ],
)
def test_extractor_output_errors(extractor, match):
    imgs = np.zeros((4, 4, 4))
    imgs[2:] = 1.0
    with pytest.raises(ValueError, match=match):
        images.features(imgs, extractor, batch_size=2, progress=False)


def test_features_input_errors():
    with pytest.raises(TypeError, match="'extractor' argument of features must be a callable"):
        images.features(np.zeros((1, 4, 4)), "resnet50", progress=False)
    with pytest.raises(ValueError, match=r"differ in size.*size=\(height, width\)"):
        images.features([np.zeros((4, 4)), np.zeros((5, 5))], np.mean, progress=False)
    with pytest.raises(ValueError, match="'batch_size' argument of features"):
        images.features(np.zeros((1, 4, 4)), np.mean, batch_size=0)


# --- images.profiles ------------------------------------------------------------------------


def halves():
    left = np.zeros((8, 8))
    left[:, :4] = 1.0
    return left, left[:, ::-1]


def test_pixel_profiles_record_the_representation():
    left, right = halves()
    tree = images.profiles(
        {"mirror": [left, right], "same": [left, left]}, size=4, families="average_distance"
    )
    ds = tree["pixels-4x4/cosine"].to_dataset()
    # left and right halves are orthogonal: cosine distance 1
    np.testing.assert_allclose(
        ds["average_distance"].sel(set=["mirror", "same"]), [1, 0], atol=1e-12
    )
    assert ds.attrs["representation_size"] == "4x4"
    assert ds.attrs["representation_grayscale"] == 0
    assert ds.attrs["representation_resampling"] == "Pillow BOX"
    gray = images.profiles({"a": [left, right]}, size=2, grayscale=True, families="richness")
    assert gray.dp.conditions == ["pixels-2x2-gray/cosine"]


def test_extractor_profiles_and_merge():
    torch = pytest.importorskip("torch")
    left, right = halves()
    sets = {"mirror": [left, right], "same": [left, left]}
    model = torch.nn.Sequential(torch.nn.Flatten(), torch.nn.Linear(16, 3))
    feats = images.profiles(sets, extractor=model, size=4, families="richness", progress=False)
    ds = feats["Sequential/cosine"].to_dataset()
    assert ds.attrs["representation_extractor"] == "torch.nn.modules.container.Sequential"
    assert ds.attrs["representation_dimension"] == 3
    pixels = images.profiles(sets, size=4, families="richness")
    tree = dp.merge([pixels, feats])
    assert sorted(tree.dp.conditions) == ["Sequential/cosine", "pixels-4x4/cosine"]
    named = images.profiles(
        sets, extractor=lambda x: x.reshape(len(x), -1), name="mine", families="richness"
    )
    assert named.dp.conditions == ["mine/cosine"]


def test_profiles_errors():
    with pytest.raises(TypeError, match="non-empty dict"):
        images.profiles([np.zeros((4, 4))])
    with pytest.raises(ValueError, match="pass size=\\(height, width\\)"):
        images.profiles({"a": np.zeros((2, 4, 4))}, size=None)


def test_profiles_take_a_callable_distance_on_the_vectors():
    from scipy.spatial.distance import pdist

    rng = np.random.default_rng(3)
    sets = {
        "a": [rng.random((8, 8)) for _ in range(9)],
        "b": [rng.random((8, 8)) for _ in range(7)],
    }
    manhattan = lambda u, v: float(np.abs(u - v).sum())  # noqa: E731
    node = images.profiles(sets, size=4, distance=manhattan, families="average_distance")[
        "pixels-4x4/precomputed"
    ]
    assert node.attrs["distance_callable_kind"] == "pairwise"
    for label, imgs in sets.items():  # 2 x 2 box means of the 8 x 8 images, by hand
        vectors = [im.reshape(4, 2, 4, 2).mean(axis=(1, 3)).ravel() for im in imgs]
        ref = pdist(np.array(vectors), "cityblock").mean()
        assert float(node["average_distance"].sel(set=label)) == pytest.approx(ref, rel=1e-5)
