"""The C-style preprocessor in front of the parser."""

from __future__ import annotations

import pytest

from p4compiler.errors import CompileError
from p4compiler.preprocessor import Preprocessor


def lines(text: str, **defines: str) -> list[str]:
    src = Preprocessor(defines=defines).run_text(text, "t.p4")
    return [line for line in src.text.splitlines() if line.strip()]


def test_object_like_macros_and_undef() -> None:
    assert lines("#define N 4\nbit<N> x;\n#undef N\nN") == ["bit<4> x;", "N"]


def test_macros_are_not_expanded_in_strings() -> None:
    assert lines('#define X 1\nlog_msg("X");') == ['log_msg("X");']


def test_conditionals_with_defined_and_else() -> None:
    text = "#ifdef A\na\n#elif defined(B) && B > 1\nb\n#else\nc\n#endif"
    assert lines(text, A="1") == ["a"]
    assert lines(text, B="2") == ["b"]
    assert lines(text) == ["c"]
    assert lines("#ifndef A\nna\n#endif\n#if 0\nx\n#endif") == ["na"]


def test_directives_inside_block_comments_are_ignored() -> None:
    assert lines("/*\n#error no\n*/\nok") == ["/*", "#error no", "*/", "ok"]


def test_line_map_points_into_included_files(tmp_path) -> None:
    (tmp_path / "inc.p4").write_text("a\nb\n")
    main = tmp_path / "main.p4"
    main.write_text('x\n#include "inc.p4"\ny\n')
    src = Preprocessor().run(str(main))
    out = src.text.splitlines()
    b = out.index("b") + 1
    assert src.location(b, 3).file.endswith("inc.p4") and src.location(b, 3).line == 2
    y = out.index("y") + 1
    assert src.location(y, 1).line == 3


def test_system_includes_resolve_the_shipped_architecture() -> None:
    src = Preprocessor().run_text("#include <core.p4>\n#include <v1model.p4>\n")
    assert "extern packet_in" in src.text and "package V1Switch" in src.text


@pytest.mark.parametrize("text,msg", [
    ('#include "nope.p4"', "not found"),
    ("#if 1\nx", "unterminated"),
    ("#endif", "without #if"),
    ("#error stop here", "#error stop here"),
    ("#define F(x) x\nF(1, 2)", "requires 1 arguments, but 2 given"),
    ("#define F(x) x\nF(1", "unterminated argument list"),
])
def test_errors_have_locations(text: str, msg: str) -> None:
    with pytest.raises(CompileError) as e:
        Preprocessor().run_text(text, "t.p4")
    assert msg in e.value.message and e.value.loc.file == "t.p4"


def test_pragma_once_reads_a_file_once(tmp_path) -> None:
    # As cpp: `#pragma once` counts for the file whatever path includes it, and
    # only when the directive is in an active branch.
    (tmp_path / "once.p4").write_text("#pragma once\nx\n")
    (tmp_path / "maybe.p4").write_text("#if 0\n#pragma once\n#endif\ny\n")
    main = tmp_path / "main.p4"
    main.write_text('#include "once.p4"\n#include "./once.p4"\n#include "maybe.p4"\n'
                    '#include "maybe.p4"\n#pragma pack\nz\n')
    out = [line for line in Preprocessor().run(str(main)).text.splitlines() if line.strip()]
    assert out == ["x", "y", "y", "z"]


def test_line_ends_and_byte_order_mark_as_cpp(tmp_path) -> None:
    # A UTF-8 byte order mark starts no text; CR LF and a lone CR end lines, so a
    # backslash before CR LF continues a definition.
    main = tmp_path / "main.p4"
    main.write_bytes(b"\xef\xbb\xbf#define F(x) \\\r\n  (x + 1)\r\nF(2)\ra\r\nb")
    src = Preprocessor().run(str(main))
    assert [line.strip() for line in src.text.splitlines() if line.strip()] == ["(2 + 1)", "a", "b"]
    assert src.location(src.text.splitlines().index("b") + 1, 1).line == 5
