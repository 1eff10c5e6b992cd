"""Untrusted text (set labels, names, attributes) encoded for where it lands.

Labels come from users and from files (a crafted netCDF can hold any string), so
every producer of Markdown, of JSON inside ``<script>`` and of charts goes through
these helpers: labels are always shown as the text they are, never run.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator

#: Markdown metacharacters that can start emphasis, links, code, lists, headings,
#: tables, strikethrough, (in Jupyter) math or (GFM) a bare-URL link at "://".
#: CommonMark lets any ASCII punctuation be backslash-escaped.
_MARKDOWN_META = re.compile(r"([\\`*_{}\[\]()#+\-.!|~$:])")
#: As HTML entities, not backslash escapes: Python-Markdown does not honour ``\<``,
#: but every Markdown renderer passes entities through as text.
_HTML = {"&": "&amp;", "<": "&lt;", ">": "&gt;", "\n": "&#10;", "\r": "&#13;"}
_HTML_RE = re.compile("[&<>\r\n]")

#: Characters that could end or change a <script> element, as JSON escapes.
_SCRIPT = {"<": "\\u003c", ">": "\\u003e", "&": "\\u0026", "\u2028": "\\u2028", "\u2029": "\\u2029"}
_SCRIPT_RE = re.compile("[<>&\u2028\u2029]")


def markdown_text(value: object) -> str:
    """``value`` as Markdown that renders as exactly its text, HTML never interpreted.

    Examples
    --------
    >>> print(markdown_text("<img src=x onerror=alert(1)>"))
    &lt;img src=x onerror=alert\\(1\\)&gt;
    >>> print(markdown_text("**A** & [B](u)"))
    \\*\\*A\\*\\* &amp; \\[B\\]\\(u\\)
    """
    # Backslashes first: the entities added after hold '#', which must stay unescaped.
    text = _MARKDOWN_META.sub(r"\\\1", str(value))
    return _HTML_RE.sub(lambda m: _HTML[m.group()], text)


def markdown_code(value: object) -> str:
    """``value`` as a Markdown code span that no backtick in it can close early.

    The fence is one backtick longer than the longest run inside. Content that
    starts or ends with a backtick, or starts and ends with a space, is padded with
    one space each side, which CommonMark strips again. Line breaks become spaces
    (a code span is one line).

    Examples
    --------
    >>> markdown_code("clip")
    '`clip`'
    >>> markdown_code("a`b``c")
    '```a`b``c```'
    >>> markdown_code("`x")
    '`` `x ``'
    """
    text = re.sub(r"\r\n|\r|\n", " ", str(value))
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    fence = "`" * (longest + 1)
    pad = text.startswith("`") or text.endswith("`") or text[:1] == text[-1:] == " "
    space = " " if pad and text.strip(" ") else ""
    return f"{fence}{space}{text}{space}{fence}"


def script_safe(json_text: str) -> str:
    """JSON text made safe to sit inside a ``<script>`` element.

    ``<``, ``>``, ``&`` and U+2028/U+2029 occur in JSON only inside strings, where
    their ``\\uXXXX`` escapes mean the same; so ``</script>``, ``<!--`` and
    ``<script`` cannot appear and the JSON still parses to the same value.

    Examples
    --------
    >>> print(script_safe('["</script><!--"]'))
    ["\\u003c/script\\u003e\\u003c!--"]
    """
    return _SCRIPT_RE.sub(lambda m: _SCRIPT[m.group()], json_text)


def script_json(value) -> str:
    """``json.dumps(value)`` for a ``<script>`` element (see :func:`script_safe`).

    Examples
    --------
    >>> text = script_json({"set": "</script><script>alert(1)</script>"})
    >>> "<" in text, json.loads(text) == {"set": "</script><script>alert(1)</script>"}
    (False, True)
    """
    return script_safe(json.dumps(value))


class ScriptSafeEncoder(json.JSONEncoder):
    """A JSON encoder whose output is safe inside ``<script>`` (``json.dumps(cls=...)``).

    Examples
    --------
    >>> print(json.dumps(["<!--<script>"], cls=ScriptSafeEncoder))
    ["\\u003c!--\\u003cscript\\u003e"]
    """

    def encode(self, o) -> str:
        return script_safe(super().encode(o))

    def iterencode(self, o, _one_shot: bool = False) -> Iterator[str]:
        for chunk in super().iterencode(o, _one_shot):
            yield script_safe(chunk)


def shorten(text: object, width: int) -> str:
    """``text`` cut to ``width`` characters with an ellipsis, for drawing.

    Examples
    --------
    >>> shorten("abcdef", 4), shorten("abc", 4)
    ('abc…', 'abc')
    """
    text = str(text)
    return text if len(text) <= width else text[: width - 1] + "…"


def display_labels(labels: list[str], width: int = 60) -> list[str]:
    """Labels shortened to ``width`` characters for drawing, still distinct.

    Chart renderers measure every character of every label they draw, so a
    30,000-character label takes tens of seconds; the drawn text is cut with an
    ellipsis (the data and tooltips keep the full label). Cut labels that would
    collide get a counter.

    Examples
    --------
    >>> display_labels(["A", "x" * 70, "x" * 71], width=10)
    ['A', 'xxxxxxxxx…', 'xxxxxx… #2']
    """
    shown = [str(s) for s in labels]
    taken = {s for s in shown if len(s) <= width}
    for i, label in enumerate(shown):
        if len(label) <= width:
            continue
        name, k = shorten(label, width), 1
        while name in taken:
            k += 1
            suffix = f"… #{k}"
            name = label[: width - len(suffix)] + suffix
        taken.add(name)
        shown[i] = name
    return shown
