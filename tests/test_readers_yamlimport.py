"""readers/yamlimport: yaml imported with the pure-Python reader's pattern compiled on first use."""

from __future__ import annotations

import subprocess
import sys
import textwrap

CHILD = textwrap.dedent(
    """
    import re
    import upgradeplan.readers.yamldata
    import yaml

    pattern = yaml.reader.Reader.NON_PRINTABLE
    print(type(pattern).__name__)
    print(isinstance(re.compile(pattern.pattern), re.Pattern))  # re's cache holds no proxy
    try:
        yaml.safe_load("a: \\x07")  # the pure-Python reader refuses it, as always
    except yaml.reader.ReaderError as exc:
        print("refused", exc.character)
    real = re.compile(pattern.pattern)
    texts = ["plain", "tab\\tok", "bell\\x07", "\\ufffe", "\\U0001f600", "\\x85\\xa0"]
    print(all(bool(pattern.search(t)) == bool(real.search(t)) for t in texts))
    """
)


def test_the_reader_pattern_is_deferred_and_reads_as_before() -> None:
    """The C loaders never read it, so it is not compiled at import; when the pure-Python
    reader uses it, it is the same pattern (the text is yaml's own)."""
    out = subprocess.run(
        [sys.executable, "-c", CHILD], capture_output=True, text=True, check=True
    ).stdout.split("\n")
    assert out[:4] == ["_DeferredPattern", "True", "refused 7", "True"]


def test_yaml_imported_first_is_left_alone() -> None:
    code = (
        "import yaml, upgradeplan.readers.yamldata; print(type(yaml.reader.Reader.NON_PRINTABLE))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout
    assert out.strip() == "<class 're.Pattern'>"
