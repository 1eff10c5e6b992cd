"""Featurisation throughput: molecules/s for Morgan fingerprints, sentences/s for text.

Molecules: the first ``--n`` SMILES of the MOSES test split (molsets, MIT licence).

- ``molecules.fingerprints`` in one process (batches of 1,000, each molecule
  fingerprinted with ``GetFingerprintAsNumPy`` right after parsing, plus the
  validity checks), and with ``n_jobs`` worker processes (spawn start-up included);
- the loop a user would write: ``GetFingerprintAsNumPy(MolFromSmiles(s))`` for
  each molecule, then ``np.stack``; the bits must be identical;
- RDKit's batched API: parse everything, then ``GetFingerprints(mols,
  numThreads=<CPUs>)`` and one hex-to-bits conversion (the alternative we measured
  and did not pick: the threads cannot share the parsing, which holds the GIL);
- the floor: ``Chem.MolFromSmiles`` alone, which no single process can beat;
- ``molecules.scaffolds`` (Bemis–Murcko).

Text, when ``diversity_profiles.text`` and its model package are installed:
gensim's Lee background corpus split into sentences (2,619; ABC news) and the 200
movie-review sentences (Pang & Lee), through ``text.embed`` (all-MiniLM-L6-v2 on
the CPU unless a GPU is visible) and ``text.ngram_similarity`` (the n × n n-gram
overlap kernel, so its rate falls with n).

Times are best-of-N wall clock over interleaved rounds (the machine may be shared);
the load average and the CPUs other processes kept busy beforehand are recorded.
Run: ``python benchmarks/featurisation.py [--n 20000] [--jobs 2] [--wait-idle 120]``;
prints JSON and writes ``benchmarks/featurisation_results.json``.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from _common import best_of, cpu_busy, machine_report, wait_until_idle  # noqa: E402
from diversity_profiles import datasets, molecules  # noqa: E402


def rate(count: int, seconds: float) -> float:
    return round(count / seconds, 1)


def bench_molecules(n: int, jobs: int, repeat: int) -> dict:
    from rdkit import Chem, rdBase
    from rdkit.Chem import rdFingerprintGenerator

    smiles = datasets.moses_smiles("test", limit=n)
    molecules.fingerprints(smiles[:100], progress=False)  # warm-up: lazy imports

    def one_at_a_time():
        gen = rdFingerprintGenerator.GetMorganGenerator(radius=2, fpSize=2048)
        with rdBase.BlockLogs():
            return np.stack([gen.GetFingerprintAsNumPy(Chem.MolFromSmiles(s)) for s in smiles])

    def parse_only():
        with rdBase.BlockLogs():
            return [Chem.MolFromSmiles(s) for s in smiles]

    def batched_api():
        from rdkit import DataStructs

        gen = rdFingerprintGenerator.GetMorganGenerator(radius=2, fpSize=2048)
        fps = gen.GetFingerprints(parse_only(), numThreads=os.cpu_count() or 1)
        raw = bytes.fromhex("".join(DataStructs.BitVectToFPSText(fp) for fp in fps))
        packed = np.frombuffer(raw, dtype=np.uint8).reshape(len(fps), -1)
        return np.unpackbits(packed, axis=1, count=2048, bitorder="little")

    # Interleaved rounds, so that every variant sees the same changes of load.
    variants = {
        "fingerprints": lambda: molecules.fingerprints(smiles, progress=False),
        "rdkit_one_at_a_time_GetFingerprintAsNumPy": one_at_a_time,
        "rdkit_batched_GetFingerprints_all_threads": batched_api,
        "rdkit_parse_only_floor": parse_only,
        f"fingerprints_n_jobs_{jobs}": lambda: molecules.fingerprints(
            smiles, progress=False, n_jobs=jobs
        ),
    }
    times: dict[str, float] = {}
    results: dict[str, object] = {}
    for _ in range(repeat):
        for name, fn in variants.items():
            seconds, results[name], _ = best_of(fn, 1)
            times[name] = min(times.get(name, np.inf), seconds)
    times["scaffolds"], _, _ = best_of(lambda: molecules.scaffolds(smiles, progress=False), 1)
    base = results["rdkit_one_at_a_time_GetFingerprintAsNumPy"]
    fingerprinters = [k for k in results if k != "rdkit_parse_only_floor"]
    return {
        "data": f"MOSES test split, first {len(smiles)} SMILES",
        "fingerprint": "Morgan radius 2, 2048 bits",
        "molecules_per_s": {k: rate(n, t) for k, t in times.items()},
        "seconds": {k: round(t, 3) for k, t in times.items()},
        "speedup_over_one_at_a_time": round(
            times["rdkit_one_at_a_time_GetFingerprintAsNumPy"] / times["fingerprints"], 2
        ),
        "share_of_time_parsing": round(times["rdkit_parse_only_floor"] / times["fingerprints"], 2),
        "bits_identical_to_rdkit": all(np.array_equal(results[k], base) for k in fingerprinters),
    }


def sentences() -> dict[str, list[str]]:
    lee = [
        s
        for doc in datasets.gensim_text("lee_background")
        for s in re.split(r"(?<=[.!?])\s+", doc)
        if s.strip()
    ]
    reviews = [s for part in datasets.movie_reviews().values() for s in part]
    return {"lee_background sentences": lee, "movie-review sentences": reviews}


def bench_text(repeat: int) -> dict:
    try:
        from diversity_profiles import text
    except ImportError as exc:
        return {"skipped": f"diversity_profiles.text is not available: {exc}"}
    out: dict = {}
    for name, texts in sentences().items():
        row: dict = {"n": len(texts)}
        t_ng, _, _ = best_of(lambda texts=texts: text.ngram_similarity(texts), repeat)
        row["ngram_similarity_sentences_per_s"] = rate(len(texts), t_ng)
        try:
            text.embed(texts[:8], progress=False)  # warm-up: load the model once
            t_emb, X, _ = best_of(
                lambda texts=texts: text.embed(texts, progress=False), max(repeat - 1, 1)
            )
            row["embed_sentences_per_s"] = rate(len(texts), t_emb)
            row["embedding_dim"] = int(X.shape[1])
        except (ImportError, OSError, FileNotFoundError) as exc:
            row["embed_skipped"] = str(exc)
        out[name] = row
    try:
        import torch

        out["torch"] = {
            "version": torch.__version__,
            "threads": torch.get_num_threads(),
            "device": "cuda" if torch.cuda.is_available() else "cpu",
        }
    except ImportError:
        pass
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--n", type=int, default=20_000, help="SMILES to featurise")
    parser.add_argument("--jobs", type=int, default=2, help="processes for the n_jobs row")
    parser.add_argument("--repeat", type=int, default=3, help="best of this many runs")
    parser.add_argument("--no-text", action="store_true", help="molecules only")
    parser.add_argument(
        "--wait-idle",
        type=float,
        default=0.0,
        metavar="SECONDS",
        help="first wait up to SECONDS for other processes to quiet down",
    )
    args = parser.parse_args()
    if args.wait_idle > 0:
        wait_until_idle(args.wait_idle)
    machine = machine_report()
    report = {
        "what": "featurisation throughput (best-of-N wall clock)",
        "machine": {k: machine[k] for k in ("date", "nproc", "cpu_model", "python", "numpy")},
        "load_before": list(os.getloadavg()),
        "other_processes_busy_cpus_before": cpu_busy(),
        "molecules": bench_molecules(args.n, args.jobs, args.repeat),
    }
    if not args.no_text:
        report["text"] = bench_text(args.repeat)
    report["load_after"] = list(os.getloadavg())
    try:
        import rdkit

        report["machine"]["rdkit"] = rdkit.__version__
    except ImportError:  # pragma: no cover
        pass
    print(json.dumps(report, indent=2))
    HERE.joinpath("featurisation_results.json").write_text(json.dumps(report, indent=2) + "\n")


if __name__ == "__main__":
    t0 = time.perf_counter()
    main()
    print(f"({time.perf_counter() - t0:.0f} s)", file=sys.stderr)
