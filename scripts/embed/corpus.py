"""The fitting corpus: Python sources of pinned PyPI packages, disjoint from the standard
library (which booger's retrieval benchmark uses) and from the repositories of
../shared/eval/repos and ../shared/eval/questions (requests, also vendored by pip, is left
out; the shipped table was fitted before it was, and a refit without it scored no better on
those questions: BENCHMARKS.md, "Questions about code"), fetched with pip."""

import subprocess
import sys
import zipfile
from pathlib import Path

PACKAGES = [
    "django==5.1.4",
    "networkx==3.4.2",
    "sphinx==8.1.3",
    "docutils==0.21.2",
    "pygments==2.18.0",
    "pip==24.3.1",
    "setuptools==75.6.0",
    "flask==3.1.0",
    "werkzeug==3.1.3",
    "click==8.1.7",
    "jinja2==3.1.4",
    "rich==13.9.4",
    "attrs==24.2.0",
]


def corpus_dir(cache: Path) -> Path:
    """Every .py file of the packages' wheels, unpacked under cache/corpus."""
    out = cache / "corpus"
    if (out / ".done").exists():
        return out
    wheels = cache / "wheels"
    wheels.mkdir(parents=True, exist_ok=True)
    subprocess.run(
        [sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary=:all:", "-q", "-d", str(wheels), *PACKAGES],
        check=True,
    )
    for wheel in sorted(wheels.glob("*.whl")):
        with zipfile.ZipFile(wheel) as z:
            for name in z.namelist():
                if name.endswith(".py") and "/_vendor/requests/" not in name:
                    z.extract(name, out / wheel.name.split("-")[0])
    (out / ".done").write_text("ok")
    return out
