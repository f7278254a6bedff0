import pytest
from hermes_plugin_toolset_files.patching import PatchError, apply_unified_diff, replace_text

SOURCE = "def f():\n    return 1\n\n\ndef g():\n    return 2\n"


def test_exact_unique_replacement() -> None:
    text, how = replace_text(SOURCE, "return 1", "return 10")
    assert "return 10" in text and "return 2" in text and "exact" in how


def test_a_passage_that_is_not_unique_is_refused_unless_replace_all() -> None:
    with pytest.raises(PatchError, match="occurs 2 times"):
        replace_text(SOURCE, "    return", "    yield")
    text, _ = replace_text(SOURCE, "    return", "    yield", replace_all=True)
    assert text.count("yield") == 2


def test_indentation_and_trailing_spaces_are_tolerated() -> None:
    text, how = replace_text(SOURCE, "def g():\n  return 2   ", "def g():\n    return 20")
    assert "return 20" in text and "whitespace" in how
    assert text.endswith("return 20\n")


def test_missing_text_says_what_to_do() -> None:
    with pytest.raises(PatchError, match="read the file again"):
        replace_text(SOURCE, "return 3", "x")


def test_unified_diff_applies_all_hunks() -> None:
    diff = (
        "--- a/m.py\n+++ b/m.py\n"
        "@@ -1,2 +1,2 @@\n def f():\n-    return 1\n+    return 11\n"
        "@@ -5,2 +5,3 @@\n def g():\n-    return 2\n+    x = 2\n+    return x\n"
    )
    text, how = apply_unified_diff(SOURCE, diff)
    assert text == "def f():\n    return 11\n\n\ndef g():\n    x = 2\n    return x\n"
    assert how == "applied the diff"


def test_a_diff_that_does_not_match_changes_nothing() -> None:
    diff = "@@ -1,2 +1,2 @@\n def f():\n-    return 1\n+    return 11\n@@ -9 +9 @@\n-nope\n+x\n"
    with pytest.raises(PatchError, match="hunk 2"):
        apply_unified_diff(SOURCE, diff)
