"""The one rule for identifiers, wherever they come from: request fields (transport/validation.py
applies it to every id, namespace, key, role, kind, tag, label and model id), token claims and
static tokens (transport/principals.py: tenants and end user ids) and import files
(domain/transfer.py). Two ids that print alike must be one id, and an id must be visible, so
`id_problem` refuses:

- controls and invisible formatting characters: Unicode categories Cc (C0 and C1 controls),
  Cf (zero-width space and joiners, bidi embeddings, overrides, isolates and marks, BOM, word
  joiner, invisible operators, tag characters), Zl and Zp (line and paragraph separators);
- spaces other than the ASCII space (category Zs: NBSP, the en/em spaces, narrow and
  ideographic spaces, ...), and an id that is only whitespace;
- characters that print as nothing although they are letters or marks: the Hangul fillers
  (U+115F, U+1160, U+3164, U+FFA0), the braille blank (U+2800), the combining grapheme
  joiner (U+034F), the Khmer inherent vowels (U+17B4, U+17B5) and the other default-ignorable
  code points Unicode leaves unassigned (U+FFF0-U+FFF8, U+E0000-U+E0FFF but for the
  variation selectors);
- combining marks (categories Mn, Mc, Me) that do not follow a character they can combine
  with: at the start of the id (a lone U+0301) or after a space; variation selectors
  (U+FE00-U+FE0F, U+E0100-U+E01EF, the Mongolian ones) only directly after a base
  character, never alone, first, after a space or after another mark.

Ids in any script stay accepted: Chinese, Japanese, accented Latin written with combining
marks, emoji, and emoji with a variation selector after their base character ("❤️").
"""

from __future__ import annotations

import re
import unicodedata


def _category_class(categories: tuple[str, ...]) -> re.Pattern[str]:
    """A character class of every code point of these Unicode categories."""
    ranges: list[tuple[int, int]] = []
    for plane_start, plane_end in ((0, 0x2FFFF), (0xE0000, 0xE0FFF)):  # no Cc, Cf, Zl or Zp elsewhere
        for code in range(plane_start, plane_end + 1):
            if unicodedata.category(chr(code)) in categories:
                if ranges and ranges[-1][1] == code - 1:
                    ranges[-1] = (ranges[-1][0], code)
                else:
                    ranges.append((code, code))
    body = "".join(re.escape(chr(a)) if a == b else f"{re.escape(chr(a))}-{re.escape(chr(b))}" for a, b in ranges)
    return re.compile(f"[{body}]")


INVISIBLE = _category_class(("Cc", "Cf", "Zl", "Zp"))
# Letters and marks that print as nothing (default-ignorable or blank by design).
BLANK = re.compile(
    "[\u034f\u115f\u1160\u17b4\u17b5\u2800\u3164\uffa0\ufff0-\ufff8\U000e0000-\U000e00ff\U000e01f0-\U000e0fff]"
)
VARIATION_SELECTORS = re.compile("[\u180b-\u180d\u180f\ufe00-\ufe0f\U000e0100-\U000e01ef]")

INVISIBLE_PROBLEM = "must not contain control, zero-width, bidi-control or other invisible characters"
SPACE_PROBLEM = "must not contain spaces other than the ASCII space (no NBSP, ideographic or other Unicode spaces)"
BLANK_PROBLEM = "must not contain characters that print as nothing (Hangul fillers, braille blank, ...)"
MARK_PROBLEM = "a combining mark or variation selector must follow the character it modifies (not stand alone or first)"
WHITESPACE_PROBLEM = "must not be only whitespace"


def id_problem(value: str, max_length: int) -> str | None:
    """What is wrong with a non-empty identifier (the rule above), if anything; None when
    it is a good id. `max_length` counts characters (code points)."""
    if len(value) > max_length:
        return f"must be at most {max_length} characters"
    if value.isascii():
        if not value.isprintable():  # an ASCII control (C0, DEL)
            return INVISIBLE_PROBLEM
    else:
        if INVISIBLE.search(value):
            return INVISIBLE_PROBLEM
        if BLANK.search(value):
            return BLANK_PROBLEM
        previous = ""  # the category of the character before ("" at the start)
        for ch in value:
            category = unicodedata.category(ch)
            if category == "Zs" and ch != " ":
                return SPACE_PROBLEM
            if category[0] == "M":  # a mark must follow what it can modify
                selector = VARIATION_SELECTORS.match(ch) is not None
                if previous in ("", "Zs") or (selector and previous[0] == "M"):
                    return MARK_PROBLEM
            previous = category
    if value.isspace():
        return WHITESPACE_PROBLEM
    return None
