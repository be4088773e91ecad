"""How booger's static tier tokenizes (boogerd/src/domain/embed/wordpiece.rs): identifiers split into
words (`parse_config`, `parseConfig`, `HTTPServer` → words), underscores dropped, then BERT's
uncased WordPiece. The fit must see texts exactly as booger will."""

import re

_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])")


def presplit(text: str) -> str:
    return _CAMEL.sub(" ", text).replace("_", " ")


class Student:
    def __init__(self, tokenizer_json: str):
        from tokenizers import Tokenizer

        self.tok = Tokenizer.from_file(tokenizer_json)
        self.tok.no_padding()
        self.tok.no_truncation()

    def ids(self, texts: list[str]) -> list[list[int]]:
        return [e.ids for e in self.tok.encode_batch([presplit(t) for t in texts], add_special_tokens=False)]
