"""Function-like macros, #if arithmetic, #line: the preprocessor behaves as cpp does."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

from p4compiler.errors import CompileError
from p4compiler.preprocessor import SYSTEM_INCLUDE_DIR, Preprocessor


def pp(text: str, **defines: str) -> list[str]:
    src = Preprocessor(defines=defines).run_text(text, "t.p4")
    return [" ".join(line.split()) for line in src.text.splitlines() if line.strip()]


def test_arguments_keep_commas_inside_nested_parentheses() -> None:
    assert pp("#define ADD(a, b) ((a) + (b))\nADD(f(1, 2), (3, 4))") == \
        ["((f(1, 2)) + ((3, 4)))"]


def test_stringification_escapes_quotes_and_collapses_spaces() -> None:
    assert pp('#define S(x) #x\nS(  a   "b\\n"  c )') == ['"a \\"b\\\\n\\" c"']


def test_stringification_of_an_argument_is_not_expanded_but_a_second_level_is() -> None:
    text = "#define N 3\n#define S(x) #x\n#define XS(x) S(x)\nS(N) XS(N)"
    assert pp(text) == ['"N" "3"']


def test_token_pasting_builds_identifiers_and_handles_empty_arguments() -> None:
    text = "#define CAT(a, b) a ## b\nCAT(x, 1) CAT(, y) CAT(meta_, CAT(a, b))"
    assert pp(text) == ["x1 y meta_CAT(a, b)"]


def test_pasting_that_makes_no_token_is_an_error() -> None:
    with pytest.raises(CompileError, match="does not give a valid"):
        pp("#define P(a, b) a ## b\nP(+, /)")


def test_variadic_macros_standard_and_gnu_forms() -> None:
    text = ('#define LOG(fmt, ...) log_msg(fmt, __VA_ARGS__)\n'
            '#define G(fmt, args...) log_msg(fmt, ## args)\n'
            'LOG("a {} {}", x, (y, z))\nG("b") G("c", 1, 2)')
    assert pp(text) == ['log_msg("a {} {}", x, (y, z))', 'log_msg("b") log_msg("c", 1, 2)']


def test_a_macro_does_not_expand_inside_its_own_expansion() -> None:
    text = "#define foo foo + 1\n#define f(x) x + f(x)\nfoo f(2)"
    assert pp(text) == ["foo + 1 2 + f(2)"]


def test_indirect_recursion_stops_too() -> None:
    assert pp("#define A B\n#define B A\nA B") == ["A B"]


def test_macros_expanding_to_function_like_macros_are_invoked_on_rescan() -> None:
    text = "#define N 3\n#define G(x) x * 2\n#define F(x) G(x)\n#define H G\nF(N) H(4)"
    assert pp(text) == ["3 * 2 4 * 2"]


def test_a_function_like_macro_name_without_parentheses_is_left_alone() -> None:
    assert pp("#define f(x) x\nint f; f (1)") == ["int f; 1"]


def test_invocations_and_definitions_span_lines() -> None:
    src = Preprocessor().run_text(
        "#define M(a, \\\n  b) a - \\\n  b\nM(1,\n  2) tail\nnext", "t.p4")
    lines = src.text.splitlines()
    assert " ".join(lines[3].split()) == "1 - 2 tail"
    assert lines[4] == "" and lines[5] == "next"
    assert src.origins[5].line == 6


def test_if_arithmetic_uses_macros_and_c_semantics() -> None:
    text = ("#define N 3\n#define ADD(a, b) ((a) + (b))\n"
            "#if ADD(N, 1) == 4 && defined(ADD) && !defined NOPE && 7 / 2 == 3 && "
            "(N > 2 ? 1 : 0) && (1 << 4) == 0x10 && -7 % 3 == -1 && UNDEFINED == 0\nok\n#endif")
    assert pp(text) == ["ok"]


def test_if_errors_name_the_problem() -> None:
    with pytest.raises(CompileError, match="division by zero"):
        pp("#if 1 / 0\n#endif")
    with pytest.raises(CompileError, match="missing binary operator"):
        pp("#if 1 2\n#endif")


def test_command_line_defines_may_be_function_like() -> None:
    assert pp("SQ(3)", **{"SQ(x)": "((x) * (x))"}) == ["((3) * (3))"]


def test_line_directive_renumbers_following_lines() -> None:
    src = Preprocessor().run_text('a\n#line 100 "orig.p4"\nb\nc', "t.p4")
    assert (src.origins[2].file, src.origins[2].line) == ("orig.p4", 100)
    assert src.origins[3].line == 101


def test_pragma_lines_are_dropped_and_line_builtins_expand() -> None:
    assert pp("#pragma once\nx __LINE__ __FILE__") == ['x 2 "t.p4"']


def test_expansion_keeps_operators_from_fusing() -> None:
    assert pp("#define NEG -1\n#define P +\nx = -NEG; y = a P+ b;") == ["x = - -1; y = a + + b;"]


def test_binary_input_is_a_clear_error(tmp_path) -> None:
    f = tmp_path / "bin.p4"
    f.write_bytes(b"header h_t {\n\xff\xfe}\n")
    with pytest.raises(CompileError) as e:
        Preprocessor().run(str(f))
    assert "not a text file (byte 0xff at offset 13" in e.value.message
    assert e.value.loc.line == 2


CPP_CASES = [
    "#define ADD(a, b) ((a) + (b))\nADD(f(1, 2), (3, 4))",
    "#define S(x) #x\n#define XS(x) S(x)\n#define N 3\nS(N) XS(N)",
    "#define CAT(a, b) a ## b\nCAT(x, 1) CAT(meta_, 2)",
    "#define foo foo + 1\n#define f(x) x + f(x)\nfoo f(2)",
    "#define N 3\n#define G(x) x * 2\n#define F(x) G(x)\n#define H G\nF(N) H(4)",
    '#define LOG(fmt, ...) log(fmt, __VA_ARGS__)\nLOG("a", x, (y, z))',
    "#define f(x) x\n#define g f(\ng 1)",
    "#define obj (4 + obj)\n#define fn(x) fn(x) obj\nfn(fn(1))",
    "#if true || UNDEF\nyes\n#else\nno\n#endif",
    "#define A(x) x\n#if A(2) * 3 == 6 && (-1 >> 1) == -1 && 0x10 / 3 == 5\nok\n#endif",
]


@pytest.mark.skipif(shutil.which("cpp") is None, reason="no C preprocessor on this machine")
@pytest.mark.parametrize("text", CPP_CASES)
def test_agrees_with_the_system_cpp(text: str) -> None:
    out = subprocess.run(["cpp", "-P"], input=text, capture_output=True, text=True,
                         check=True).stdout
    theirs = [" ".join(line.split()) for line in out.splitlines() if line.strip()]
    assert " ".join(pp(text)) == " ".join(theirs)


ROOT = Path(__file__).resolve().parents[2]
REPO_PROGRAMS = sorted((ROOT / "tests" / "compiler" / "programs").glob("*.p4")) + \
    sorted((ROOT / "p4src").glob("*.p4")) + \
    sorted((ROOT / "tests" / "differential" / "programs").glob("*.p4"))
_PP_TOKEN = re.compile(r'"(?:[^"\\]|\\.)*"|\w+|\S')


def _tokens(text: str) -> list[str]:
    text = re.sub(r"/\*.*?\*/", " ", text, flags=re.S)
    return _PP_TOKEN.findall(re.sub(r"//[^\n]*", " ", text))


@pytest.mark.skipif(shutil.which("cpp") is None, reason="no C preprocessor on this machine")
@pytest.mark.parametrize("program", REPO_PROGRAMS, ids=[p.name for p in REPO_PROGRAMS])
def test_repository_programs_preprocess_as_cpp_does(program: Path) -> None:
    includes = [str(program.parent), str(ROOT / "p4src" / "include")]
    ours = Preprocessor(include_dirs=includes).run(str(program)).text
    # the options p4c-bm2-ss gives cpp (it appends -D__TARGET_BMV2__)
    cmd = ["cpp", "-P", "-nostdinc", "-undef", "-D__TARGET_BMV2__", "-I", str(SYSTEM_INCLUDE_DIR)]
    for d in includes:
        cmd += ["-I", d]
    theirs = subprocess.run(cmd + [str(program)], capture_output=True, text=True,
                            check=True).stdout
    assert _tokens(ours) == _tokens(theirs)


def test_exponential_macro_growth_is_stopped_with_an_error() -> None:
    defs = "".join(f"#define M{i} M{i + 1} M{i + 1}\n" for i in range(40))
    with pytest.raises(CompileError, match="macro expansion exceeds"):
        pp(defs + "M0")


def test_computed_include_expands_macros_first(tmp_path) -> None:
    (tmp_path / "inc.p4").write_text("included\n")
    main = tmp_path / "main.p4"
    main.write_text('#define HDR "inc.p4"\n#include HDR\n')
    assert "included" in Preprocessor().run(str(main)).text


def test_target_bmv2_is_predefined_as_p4c_bm2_ss_does() -> None:
    assert pp("#ifdef __TARGET_BMV2__\nyes __TARGET_BMV2__\n#endif\n") == ["yes 1"]


def test_a_command_line_define_replaces_the_predefined_target_macro() -> None:
    text = Preprocessor(defines={"__TARGET_BMV2__": "7"}).run_text("__TARGET_BMV2__\n").text
    assert text.split() == ["7"]
