#!/usr/bin/env python3
"""How far an embedding model outside the server could lift the search's pages.

Reads the pages the relevance test wrote with `RELEVANCE_PAGES=DIR` (the search's first 5 hits
for every query of every labelled set, words only and with the shipped model) and fuses each
page with the 10 lines of the set's workspace a model puts closest to the query (lines as
`model_recall.py` reads them). Scores each way of building a page as the relevance test does
(nDCG@5, gains 2^grade - 1, each labelled span credited once; "stale" when a superseded
statement comes before the current one or the current one is missing):

  page       the search's page as it is
  model      the model's 5 closest lines alone
  rrf        reciprocal rank fusion (k = 60) of the page and the model's 10 lines; a line
             inside a hit of the page adds to that hit
  rrf-guess  the same, cut to 2 hits when the page was a guess (every hit weak) or empty, as
             the search answers a query it finds no answer to

Only totals are printed: per set, and pooled over the held-out sets (the relevance test's
names), so their per-query results stay unseen.

  cargo test --release -p openclaw-memory --test relevance -- pages_for_rerankers
      (with RELEVANCE_PAGES=/tmp/pages and the embedding model installed)
  bench/model_fusion.py e5: /tmp/pages [--cache DIR]

The model is given as `model_recall.py` takes it (potion:DIR, onnx:FILE:TOKENIZER or e5:);
`--cache DIR` keeps its line vectors between runs.
"""
import hashlib
import json
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from model_recall import TOP, load, ndcg, overlaps, workspace_lines  # noqa: E402

FIXTURES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "fixtures")
CLOSEST = 10
RRF_K = 60
GUESS_LIMIT = 2
WAYS = ["page", "model", "rrf", "rrf-guess"]
TUNING = ["relevance", "relevance-lookups", "relevance-changes", "relevance-holdout-8", "relevance-mixed"]
HELD_OUT = ["relevance-holdout"] + [
    f"relevance-holdout-{n}" for n in (2, 3, 4, 5, 6, 7, 9, 10, 11, 12, 13)
]


def stale(hits, spans, superseded):
    def first(of):
        return next((r for r, h in enumerate(hits[:TOP]) if any(overlaps(s, h) for s in of)), None)

    old, current = first(superseded), first(spans)
    return old is not None and (current is None or old < current)


def fused(page, closest):
    """Reciprocal rank fusion of the page's hits and the model's lines."""
    scored = [[hit, 1 / (RRF_K + 1 + rank)] for rank, hit in enumerate(page)]
    for rank, line in enumerate(closest):
        inside = next((entry for entry in scored if overlaps(line, entry[0])), None)
        if inside is not None:
            inside[1] += 1 / (RRF_K + 1 + rank)
        else:
            scored.append([line, 1 / (RRF_K + 1 + rank)])
    scored.sort(key=lambda entry: -entry[1])
    return [hit for hit, _ in scored]


def pages_by_way(page, closest):
    rrf = fused(page, closest)[:TOP]
    guess = not page or all(hit["weak"] for hit in page)
    return {
        "page": page,
        "model": closest[:TOP],
        "rrf": rrf,
        "rrf-guess": rrf[:GUESS_LIMIT] if guess else rrf,
    }


def line_vectors(model, spec, workspace, lines, cache):
    if not cache:
        return model.embed([text for _, _, text in lines])
    key = hashlib.sha256(f"{spec}\0{os.path.realpath(workspace)}".encode()).hexdigest()[:16]
    path = os.path.join(cache, f"{key}.npy")
    if os.path.exists(path):
        return np.load(path)
    vectors = model.embed([text for _, _, text in lines])
    os.makedirs(cache, exist_ok=True)
    np.save(path, vectors)
    return vectors


def measure(model, spec, set_name, pages_dir, cache):
    with open(os.path.join(FIXTURES, set_name, "queries.json"), encoding="utf-8") as f:
        labels = json.load(f)
    workspace = os.path.join(FIXTURES, set_name, labels.get("workspace") or "workspace")
    lines = workspace_lines(workspace)
    vectors = line_vectors(model, spec, workspace, lines, cache)
    embed_query = getattr(model, "embed_query", model.embed)
    answerable = [query for query in labels["queries"] if query.get("relevant")]
    closest = {}
    for query in answerable:
        order = np.argsort(-(vectors @ embed_query([query["query"]])[0]))[:CLOSEST]
        closest[query["query"]] = [
            {"file": lines[i][0], "start": lines[i][1], "end": lines[i][1]} for i in order
        ]
    totals = {}
    for configuration in ("words", "model"):
        with open(os.path.join(pages_dir, f"{set_name}-{configuration}.json"), encoding="utf-8") as f:
            pages = {entry["query"]: entry["hits"] for entry in json.load(f)}
        sums = {way: [0.0, 0] for way in WAYS}
        for query in answerable:
            spans = query["relevant"]
            for way, hits in pages_by_way(pages[query["query"]], closest[query["query"]]).items():
                sums[way][0] += ndcg(hits, spans)
                sums[way][1] += stale(hits, spans, query.get("superseded") or [])
        totals[configuration] = (len(answerable), sums)
    return totals


def row(name, totals):
    cells = []
    for configuration in ("words", "model"):
        answerable, sums = totals[configuration]
        cells += [f"{sums[w][0] / answerable:.3f} ({sums[w][1]})" for w in WAYS]
    return f"| {name} | " + " | ".join(cells) + " |"


def main(argv):
    cache = None
    if "--cache" in argv:
        at = argv.index("--cache")
        cache = argv[at + 1]
        argv = argv[:at] + argv[at + 2 :]
    if len(argv) != 2:
        sys.exit(__doc__)
    spec, pages_dir = argv
    model = load(spec)
    header = " | ".join(f"{c}: {w}" for c in ("words", "with the model") for w in WAYS)
    print(f"nDCG@5 (stale pages) of each way, {spec}\n")
    print(f"| set | {header} |\n|---|" + "---:|" * (2 * len(WAYS)))
    pooled = None
    for set_name in TUNING + HELD_OUT:
        totals = measure(model, spec, set_name, pages_dir, cache)
        print(row(set_name, totals), flush=True)
        if set_name in HELD_OUT:
            if pooled is None:
                pooled = {c: (0, {w: [0.0, 0] for w in WAYS}) for c in totals}
            for configuration, (answerable, sums) in totals.items():
                count, pool = pooled[configuration]
                for way in WAYS:
                    pool[way][0] += sums[way][0]
                    pool[way][1] += sums[way][1]
                pooled[configuration] = (count + answerable, pool)
    print(row("held-out, pooled", pooled))


if __name__ == "__main__":
    main(sys.argv[1:])
