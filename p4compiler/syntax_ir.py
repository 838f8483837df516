"""The syntax tree as ir nodes: lark's parse tree -> ir.Program (without types).

syntax.parse runs the parser, then `ToIR` over its tree: one method per grammar rule,
numbers read with their width and signedness, annotations split from what they annotate.
"""

from __future__ import annotations

import re
from typing import Any

from lark import Token, Transformer, v_args

from . import ir, lists, loops
from .errors import CompileError, Location
from .preprocessor import Source


def _parse_int(text: str) -> tuple[int, int | None, bool, int]:
    """An integer literal: (value, width or None, signed, base)."""
    width = None
    signed = False
    m = re.match(r"^(\d+)([ws])(.*)$", text)
    if m:
        width = int(m.group(1))
        signed = m.group(2) == "s"
        text = m.group(3)
    t = text.replace("_", "").lower()
    base = 10
    if t.startswith("0x"):
        base, t = 16, t[2:]
    elif t.startswith("0b"):
        base, t = 2, t[2:]
    elif t.startswith("0o"):
        base, t = 8, t[2:]
    elif t.startswith("0d"):
        base, t = 10, t[2:]
    return int(t, base), width, signed, base


def _split(children: list[Any]) -> tuple[tuple[ir.Annotation, ...], list[Any]]:
    anns = tuple(c for c in children if isinstance(c, ir.Annotation))
    rest = [c for c in children if not isinstance(c, ir.Annotation)]
    return anns, rest


@v_args(meta=True)
class ToIR(Transformer):  # type: ignore[type-arg]
    def __init__(self, source: Source):
        super().__init__()
        self.source = source
        # Types applied directly (`T.apply(...)`) in the block being transformed.
        self._direct: list[ir.Instantiation] = []
        # The type of the latest declaration of each variable name (for loops.unroll_for)
        self._declared: dict[str, ir.TypeRef] = {}

    def _with_direct_instances(self, locals_: tuple) -> tuple:
        """The block's locals plus one instance per directly applied type, as p4c's
        InstantiateDirectCalls declares them."""
        made, self._direct = tuple(self._direct), []
        return made + locals_

    def _loc(self, meta: Any) -> Location:
        if getattr(meta, "empty", True):
            return Location("<input>", 0, 0)
        return self.source.location(meta.line, meta.column)

    def _tloc(self, tok: Token) -> Location:
        return self.source.location(tok.line or 0, tok.column or 0)

    # -- program / annotations
    def start(self, meta, c):
        return ir.Program(tuple(x for x in c if x is not None))

    def empty_decl(self, meta, c):
        return None

    def ann_plain(self, meta, c):
        return ir.Annotation(str(c[0]), (), (), self._loc(meta))

    def ann_args(self, meta, c):
        args = c[1] if len(c) > 1 else []
        pos = tuple(a for a in args if not isinstance(a, tuple))
        kv = tuple(a for a in args if isinstance(a, tuple))
        return ir.Annotation(str(c[0]), pos, kv, self._loc(meta))

    def ann_arg_list(self, meta, c):
        return list(c)

    def ann_kv(self, meta, c):
        return (str(c[0]), c[1])

    def any_name(self, meta, c):
        return str(c[0])

    nontype_name = any_name
    decl_name = any_name
    field_name = any_name
    member = any_name
    action_name = any_name
    keyword_name = any_name

    # -- types
    def bool_type(self, meta, c):
        return ir.TypeRef("bool", loc=self._loc(meta))

    def error_type(self, meta, c):
        return ir.TypeRef("error", loc=self._loc(meta))

    def string_type(self, meta, c):
        return ir.TypeRef("string", loc=self._loc(meta))

    def match_kind_type(self, meta, c):
        return ir.TypeRef("match_kind", loc=self._loc(meta))

    def bit1_type(self, meta, c):
        return ir.TypeRef("bit", width=ir.Lit(1), loc=self._loc(meta))

    def _width(self, c):
        w = c[-2] if isinstance(c[-1], Token) and c[-1].type == "R_ANGLE" else c[-1]
        for x in c[1:]:
            if isinstance(x, Token) and x.type == "NUMBER":
                return ir.Lit(_parse_int(str(x))[0], self._tloc(x))
            if isinstance(x, ir.Expr):
                return x
        return w

    def bit_type(self, meta, c):
        return ir.TypeRef("bit", width=self._width(c), loc=self._loc(meta))

    def int_type(self, meta, c):
        return ir.TypeRef("int", width=self._width(c), loc=self._loc(meta))

    def varbit_type(self, meta, c):
        return ir.TypeRef("varbit", width=self._width(c), loc=self._loc(meta))

    def infint_type(self, meta, c):
        return ir.TypeRef("infint", loc=self._loc(meta))

    def void_type(self, meta, c):
        return ir.TypeRef("void", loc=self._loc(meta))

    def dontcare_type(self, meta, c):
        return ir.TypeRef("dontcare", loc=self._loc(meta))

    def named_type(self, meta, c):
        return ir.TypeRef("name", name=str(c[-1]), loc=self._loc(meta))

    def specialized_type(self, meta, c):
        args = [x for x in c if isinstance(x, list)][0]
        return ir.TypeRef("name", name=str(c[0]), args=tuple(args), loc=self._loc(meta))

    def stack_type(self, meta, c):
        return ir.TypeRef("stack", elem=c[0], width=c[1], loc=self._loc(meta))

    def list_type(self, meta, c):
        elem = next(x for x in c if isinstance(x, ir.TypeRef))
        return ir.TypeRef("list", args=(elem,), loc=self._loc(meta))

    def tuple_type(self, meta, c):
        args = [x for x in c if isinstance(x, list)][0]
        return ir.TypeRef("tuple", args=tuple(args), loc=self._loc(meta))

    def type_arg_list(self, meta, c):
        return list(c)

    def type_params(self, meta, c):
        return [a.name for a in c[1]]

    # -- type declarations
    def _struct(self, kind, meta, c):
        anns, rest = _split(c)
        name = str(rest[0])
        fields = tuple(x for x in rest if isinstance(x, ir.FieldDecl))
        tparams = next((tuple(x) for x in rest[1:] if isinstance(x, list)), ())
        return ir.StructDecl(kind, name, fields, anns, self._loc(meta), tparams)

    def header_decl(self, meta, c):
        return self._struct("header", meta, c)

    def header_union_decl(self, meta, c):
        return self._struct("header_union", meta, c)

    def struct_decl(self, meta, c):
        return self._struct("struct", meta, c)

    def struct_field(self, meta, c):
        anns, rest = _split(c)
        return ir.FieldDecl(rest[1], rest[0], anns, self._loc(meta))

    def name_list(self, meta, c):
        return [str(x) for x in c]

    def enum_decl(self, meta, c):
        anns, rest = _split(c)
        return ir.EnumDecl(str(rest[0]), tuple(rest[1]), None, (), anns, self._loc(meta))

    def serenum_decl(self, meta, c):
        anns, rest = _split(c)
        members = [m for m in rest[2:] if isinstance(m, tuple)]
        return ir.EnumDecl(str(rest[1]), tuple(m[0] for m in members), rest[0],
                           tuple(m[1] for m in members), anns, self._loc(meta))

    def spec_member(self, meta, c):
        return (str(c[0]), c[1])

    def typedef_decl(self, meta, c):
        anns, rest = _split(c)
        return ir.TypedefDecl(str(rest[1]), rest[0], False, anns, self._loc(meta))

    def newtype_decl(self, meta, c):
        anns, rest = _split(c)
        return ir.TypedefDecl(str(rest[1]), rest[0], True, anns, self._loc(meta))

    def error_decl(self, meta, c):
        return ir.ErrorDecl(tuple(c[1]), self._loc(meta))

    def match_kind_decl(self, meta, c):
        return ir.MatchKindDecl(tuple(c[1]), self._loc(meta))

    # -- externs, functions, packages
    def function_proto(self, meta, c):
        ret = c[0]
        if isinstance(ret, Token):  # VOID
            ret = ir.TypeRef("void", loc=self._tloc(ret))
        name = str(c[1])
        tparams: tuple[str, ...] = ()
        params: tuple[ir.Param, ...] = ()
        for x in c[2:]:
            if isinstance(x, list) and x and isinstance(x[0], str):
                tparams = tuple(x)
            elif isinstance(x, tuple):
                params = x
        return ir.MethodProto(name, ret, tparams, params, (), self._loc(meta))

    def method_proto(self, meta, c):
        anns, rest = _split(c)
        p = rest[0]
        return ir.MethodProto(p.name, p.ret, p.type_params, p.params, anns, p.loc)

    def constructor_proto(self, meta, c):
        anns, rest = _split(c)
        return ir.MethodProto(str(rest[0]), None, (), rest[1], anns, self._loc(meta))

    def extern_decl(self, meta, c):
        anns, rest = _split(c)
        name = str(rest[0])
        tparams = tuple(rest[1]) if len(rest) > 1 and isinstance(rest[1], list) else ()
        methods = tuple(x for x in rest if isinstance(x, ir.MethodProto))
        return ir.ExternDecl(name, tparams, methods, anns, self._loc(meta))

    def extern_function(self, meta, c):
        anns, rest = _split(c)
        p = rest[0]
        return ir.ExternFunctionDecl(
            ir.MethodProto(p.name, p.ret, p.type_params, p.params, anns, p.loc), self._loc(meta))

    def package_decl(self, meta, c):
        anns, rest = _split(c)
        tparams = tuple(rest[1]) if isinstance(rest[1], list) else ()
        return ir.PackageDecl(str(rest[0]), tparams, rest[-1], anns, self._loc(meta))

    def function_decl(self, meta, c):
        anns, rest = _split(c)
        p = rest[0]
        proto = ir.MethodProto(p.name, p.ret, p.type_params, p.params, anns, p.loc)
        return ir.FunctionDecl(proto, rest[1], self._loc(meta))

    # -- params / args
    def params(self, meta, c):
        return tuple(c)

    def ctor_params(self, meta, c):
        return ("ctor", c[0])

    def direction(self, meta, c):
        return str(c[0])

    def param(self, meta, c):
        anns, rest = _split(c)
        direction = ""
        if isinstance(rest[0], str) and not isinstance(rest[0], ir.TypeRef):
            direction = rest.pop(0)
        default = rest[2] if len(rest) > 2 else None
        return ir.Param(rest[1], direction, rest[0], anns, self._loc(meta), default=default)

    def args(self, meta, c):
        return tuple(x if isinstance(x, ir.Arg) else ir.Arg(x, None, getattr(x, "loc", None))
                     for x in c)

    def dontcare_arg(self, meta, c):
        return ir.Arg(None, None, self._loc(meta))

    def named_arg(self, meta, c):
        return ir.Arg(c[1], str(c[0]), self._loc(meta))

    def named_dontcare_arg(self, meta, c):
        return ir.Arg(None, str(c[0]), self._loc(meta))

    # -- locals
    def constant_decl(self, meta, c):
        anns, rest = _split(c)
        return ir.ConstDecl(rest[0], str(rest[1]), rest[2], anns, self._loc(meta))

    def instantiation(self, meta, c):
        anns, rest = _split(c)
        return ir.Instantiation(rest[0], rest[1], str(rest[2]), anns, self._loc(meta))

    def instantiation_init(self, meta, c):
        raise CompileError(self._loc(meta), "abstract method implementations are not supported")

    def variable_decl(self, meta, c):
        anns, rest = _split(c)
        init = rest[2] if len(rest) > 2 else None
        self._declared[str(rest[1])] = rest[0]
        return ir.VarDecl(lists.sized(rest[0], init), str(rest[1]), init, anns, self._loc(meta))

    def value_set_decl(self, meta, c):
        anns, rest = _split(c)
        targs = [x for x in rest if isinstance(x, list)][0]
        size, name = rest[-2], rest[-1]
        return ir.ValueSetDecl(targs[0], size, str(name), anns, self._loc(meta))

    # -- parsers
    def _block_header(self, c):
        anns, rest = _split(c)
        name = str(rest[0])
        tparams: tuple[str, ...] = ()
        i = 1
        if isinstance(rest[i], list):
            tparams = tuple(rest[i])
            i += 1
        params = rest[i]
        i += 1
        ctor: tuple[ir.Param, ...] = ()
        if i < len(rest) and isinstance(rest[i], tuple) and rest[i][:1] == ("ctor",):
            ctor = rest[i][1]
            i += 1
        return anns, name, tparams, params, ctor, rest[i:]

    def parser_decl(self, meta, c):
        anns, name, tparams, params, ctor, rest = self._block_header(c)
        states = tuple(x for x in rest if isinstance(x, ir.ParserState))
        locals_ = tuple(x for x in rest if not isinstance(x, ir.ParserState))
        locals_ = self._with_direct_instances(locals_)
        return ir.ParserDecl(name, tparams, params, ctor, locals_, states, anns, self._loc(meta))

    def parser_proto(self, meta, c):
        anns, name, tparams, params, ctor, rest = self._block_header(c)
        return ir.ParserDecl(name, tparams, params, (), (), (), anns, self._loc(meta), True)

    def parser_state(self, meta, c):
        anns, rest = _split(c)
        trans = rest[-1] if rest and isinstance(rest[-1], ir.Transition) else None
        stmts = tuple(x for x in rest[1:] if isinstance(x, ir.Stmt))
        return ir.ParserState(str(rest[0]), stmts, trans, anns, self._loc(meta))

    def parser_block(self, meta, c):
        return ir.Block(tuple(c), self._loc(meta))

    def parser_if(self, meta, c):
        return ir.If(c[0], c[1], c[2] if len(c) > 2 else None, self._loc(meta))

    def transition_to(self, meta, c):
        return ir.Transition(str(c[0]), loc=self._loc(meta))

    def transition_select(self, meta, c):
        keys, cases = c[0]
        return ir.Transition(None, keys, cases, self._loc(meta))

    def select_expr(self, meta, c):
        keys = tuple(a.value for a in c[0])
        return (keys, tuple(c[1:]))

    def select_case(self, meta, c):
        keys = c[0] if isinstance(c[0], tuple) else (c[0],)
        return ir.SelectCase(keys, str(c[1]), self._loc(meta))

    def tuple_keyset(self, meta, c):
        return tuple(c)

    def mask_keyset(self, meta, c):
        return ir.MaskKey(c[0], c[1], self._loc(meta))

    def range_keyset(self, meta, c):
        return ir.RangeKey(c[0], c[1], self._loc(meta))

    def default_keyset(self, meta, c):
        return ir.DefaultKey(self._loc(meta))

    def dontcare_keyset(self, meta, c):
        return ir.DefaultKey(self._loc(meta))

    # -- controls
    def control_decl(self, meta, c):
        anns, name, tparams, params, ctor, rest = self._block_header(c)
        body = rest[-1]
        locals_ = self._with_direct_instances(tuple(rest[:-1]))
        return ir.ControlDecl(name, tparams, params, ctor, locals_, body, anns,
                              self._loc(meta))

    def control_proto(self, meta, c):
        anns, name, tparams, params, ctor, rest = self._block_header(c)
        return ir.ControlDecl(name, tparams, params, (), (), ir.Block(()), anns,
                              self._loc(meta), True)

    def action_decl(self, meta, c):
        anns, rest = _split(c)
        return ir.ActionDecl(rest[0], rest[1], rest[2], anns, self._loc(meta))

    def table_decl(self, meta, c):
        anns, rest = _split(c)
        props: dict[str, Any] = {"properties": []}
        for p in rest[1:]:
            kind, value = p
            if kind == "custom":
                props["properties"].append(value)
            else:
                props.update(value)
        props["properties"] = tuple(props["properties"])
        return ir.TableDecl(str(rest[0]), annotations=anns, loc=self._loc(meta), **props)

    def table_key(self, meta, c):
        return ("key", {"key": tuple(c)})

    def table_actions(self, meta, c):
        if not c:
            # `actions = {}`: the table can only run its default action, which p4c
            # makes NoAction (a default-only entry of the action list).
            loc = self._loc(meta)
            c = [ir.ActionRef("NoAction", None, (ir.Annotation("defaultonly"),), loc)]
        return ("actions", {"actions": tuple(c)})

    def table_default(self, meta, c):
        anns, rest = _split(c)
        const = isinstance(rest[0], Token) and rest[0].type == "CONST"
        return ("default", {"default_action": rest[-1], "default_const": const})

    def table_entries(self, meta, c):
        anns, rest = _split(c)
        const = isinstance(rest[0], Token) and rest[0].type == "CONST"
        return ("entries", {"entries": tuple(x for x in rest if isinstance(x, ir.Entry)),
                            "entries_const": const})

    def table_custom(self, meta, c):
        anns, rest = _split(c)
        const = isinstance(rest[0], Token) and rest[0].type == "CONST"
        if const:
            rest = rest[1:]
        return ("custom", ir.TableProperty(str(rest[0]), rest[1], const, anns, self._loc(meta)))

    def key_elem(self, meta, c):
        anns, rest = _split(c)
        return ir.KeyElem(rest[0], str(rest[1]), anns, self._loc(meta))

    def action_ref(self, meta, c):
        anns, rest = _split(c)
        args = rest[1] if len(rest) > 1 else None
        return ir.ActionRef(str(rest[0]), args, anns, self._loc(meta))

    def entry(self, meta, c):
        anns, rest = _split(c)
        rest = [x for x in rest if not (isinstance(x, Token) and x.type == "CONST")]
        prio = None
        if rest and isinstance(rest[0], tuple) and rest[0][:1] == ("priority",):
            prio = rest.pop(0)[1]
        keys = rest[0] if isinstance(rest[0], tuple) else (rest[0],)
        return ir.Entry(keys, rest[1], prio, anns, self._loc(meta))

    def entry_priority(self, meta, c):
        return ("priority", c[0])

    # -- statements
    def block(self, meta, c):
        return ir.Block(tuple(c), self._loc(meta))

    def annotated_block(self, meta, c):
        # `@atomic { ... }` (P4_16 block statement with annotations): for bmv2 the
        # annotations change nothing, the block runs as written.
        return c[-1]

    def empty_stmt(self, meta, c):
        return ir.Empty(self._loc(meta))

    def assignment(self, meta, c):
        return ir.Assign(c[0], c[1], self._loc(meta))

    def compound_assignment(self, meta, c):
        return loops.compound_assign(c[0], str(c[1]), c[2], self._loc(meta))

    def for_stmt(self, meta, c):
        init, rest = c[0], c[1:]
        cond = rest.pop(0) if isinstance(rest[0], ir.Expr) else None
        return loops.unroll_for(init, cond, rest[0], rest[1], self._loc(meta), self._declared)

    def for_in_stmt(self, meta, c):
        _, rest = _split(c)
        tref, name, coll, body = rest
        return loops.unroll_for_in(tref, str(name), coll, body, self._loc(meta))

    def for_simple_list(self, meta, c):
        return list(c)

    def for_var(self, meta, c):
        anns, rest = _split(c)
        return ir.VarDecl(rest[0], str(rest[1]), rest[2], anns, self._loc(meta))

    def for_var_noinit(self, meta, c):
        anns, rest = _split(c)
        return ir.VarDecl(rest[0], str(rest[1]), None, anns, self._loc(meta))

    def for_assign(self, meta, c):
        return ir.Assign(c[0], c[1], self._loc(meta))

    def for_compound(self, meta, c):
        return self.compound_assignment(meta, c)

    def for_call(self, meta, c):
        return ir.CallStmt(ir.Call(c[0], c[1], (), self._loc(meta)), self._loc(meta))

    def for_range(self, meta, c):
        return ("range", c[0], c[1])

    def break_stmt(self, meta, c):
        return ir.Break(self._loc(meta))

    def continue_stmt(self, meta, c):
        return ir.Continue(self._loc(meta))

    def call_stmt(self, meta, c):
        c = [x for x in c if not (isinstance(x, Token) and x.type in ("L_ANGLE", "R_ANGLE"))]
        if len(c) == 3:
            call = ir.Call(c[0], c[2], tuple(c[1]), self._loc(meta))
        else:
            call = ir.Call(c[0], c[1], (), self._loc(meta))
        return ir.CallStmt(call, self._loc(meta))

    def direct_apply(self, meta, c):
        loc = self._loc(meta)
        type_name = str(c[0])
        inst = f"{type_name}_inst"
        if not any(d.name == inst for d in self._direct):
            # The control plane sees the type's name (`Outer.T`), as p4c's
            # InstantiateDirectCalls names it with @name("T").
            name = ir.Annotation("name", (ir.StrLit(type_name, loc),), (), loc)
            self._direct.append(ir.Instantiation(ir.TypeRef("name", name=type_name, loc=loc),
                                                 (), inst, (name,), loc))
        call = ir.Call(ir.Member(ir.Name(inst, loc), "apply", loc), c[1], (), loc)
        return ir.CallStmt(call, loc)

    def if_stmt(self, meta, c):
        return ir.If(c[0], c[1], c[2] if len(c) > 2 else None, self._loc(meta))

    def exit_stmt(self, meta, c):
        return ir.Exit(self._loc(meta))

    def return_stmt(self, meta, c):
        return ir.Return(c[0] if c else None, self._loc(meta))

    def switch_stmt(self, meta, c):
        return ir.Switch(c[0], tuple(c[1:]), self._loc(meta))

    def switch_case(self, meta, c):
        return ir.SwitchCase(c[0], c[1], self._loc(meta))

    def switch_fallthrough(self, meta, c):
        return ir.SwitchCase(c[0], None, self._loc(meta))

    def default_label(self, meta, c):
        return None

    # -- expressions
    def name_ref(self, meta, c):
        return ir.Name(str(c[0]), self._loc(meta))

    def top_name_ref(self, meta, c):
        return ir.Name(str(c[0]), self._loc(meta), top=True)

    def member(self, meta, c):  # noqa: F811 - rule alias shared with terminal list
        if len(c) == 1:
            return str(c[0])
        return ir.Member(c[0], c[1], self._loc(meta))

    def index(self, meta, c):
        return ir.Index(c[0], c[1], self._loc(meta))

    def slice(self, meta, c):
        return loops.flatten_slice(ir.Slice(c[0], c[1], c[2], self._loc(meta)))

    def indexed_slice(self, meta, c):
        """`e[lo +: width]` is `e[lo + width - 1 : lo]` (P4_16 8.5, indexed slices)."""
        loc = self._loc(meta)
        hi = ir.Binary("-", ir.Binary("+", c[1], c[2], loc), ir.Lit(1, loc), loc)
        return loops.flatten_slice(ir.Slice(c[0], hi, c[1], loc))

    def call(self, meta, c):
        return ir.Call(c[0], c[1], (), self._loc(meta))

    def generic_call(self, meta, c):
        targs = [x for x in c if isinstance(x, list)][0]
        return ir.Call(c[0], c[-1], tuple(targs), self._loc(meta))

    def number(self, meta, c):
        value, width, signed, base = _parse_int(str(c[0]))
        t = None if width is None else ir.Bits(width, signed)
        # a value out of its width's range wraps (with a warning) in the type checker
        return ir.Lit(value, self._loc(meta), t, base)

    def true_lit(self, meta, c):
        return ir.BoolLit(True, self._loc(meta))

    def false_lit(self, meta, c):
        return ir.BoolLit(False, self._loc(meta))

    def string_lit(self, meta, c):
        # Escapes (\n, \") are decoded; other characters stay as written: a UTF-8
        # name (`@name("prefix◕‿◕")`) reaches the JSON and P4Info unchanged, as in p4c.
        s = str(c[0])[1:-1]
        return ir.StrLit(s.encode("latin-1", "backslashreplace").decode("unicode_escape"),
                         self._loc(meta))

    def type_member(self, meta, c):
        t = ir.TypeName(ir.TypeRef("name", name=str(c[0])), self._loc(meta))
        return ir.Member(t, c[1], self._loc(meta))

    def ctor_call(self, meta, c):
        return ir.Call(ir.TypeName(c[0], self._loc(meta)), c[1], (), self._loc(meta))

    def error_member(self, meta, c):
        return ir.ErrorMember(str(c[1]), self._loc(meta))

    def list_expr(self, meta, c):
        if len(c) == 1 and isinstance(c[0], ir.Dots):  # `{...}`: every field's default
            return ir.StructExpr((("...", None),), self._loc(meta))
        return ir.ListExpr(tuple(c), self._loc(meta))

    def dots_expr(self, meta, c):
        return ir.Dots(self._loc(meta))

    def struct_expr(self, meta, c):
        # A trailing `...` (P4_16 8.26) stays as the marker field ("...", None): the
        # type checker fills the fields not given with their default values.
        return ir.StructExpr(tuple(("...", None) if isinstance(x, Token) else x for x in c),
                             self._loc(meta))

    def kv_pair(self, meta, c):
        return (c[0], c[1])

    def invalid_expr(self, meta, c):
        return ir.InvalidHeader(self._loc(meta))

    def mux(self, meta, c):
        return ir.Mux(c[0], c[1], c[2], self._loc(meta))

    def _bin(self, op, meta, c):
        return ir.Binary(op, c[0], c[1], self._loc(meta))

    def binop(self, meta, c):
        return ir.Binary(str(c[1]), c[0], c[2], self._loc(meta))

    def lor(self, meta, c):
        return self._bin("||", meta, c)

    def land(self, meta, c):
        return self._bin("&&", meta, c)

    def bor(self, meta, c):
        return self._bin("|", meta, c)

    def bxor(self, meta, c):
        return self._bin("^", meta, c)

    def band(self, meta, c):
        return self._bin("&", meta, c)

    def lnot(self, meta, c):
        return ir.Unary("!", c[0], self._loc(meta))

    def bnot(self, meta, c):
        return ir.Unary("~", c[0], self._loc(meta))

    def neg(self, meta, c):
        return ir.Unary("-", c[-1], self._loc(meta))

    def pos(self, meta, c):
        return c[-1]

    def cast(self, meta, c):
        return ir.Cast(lists.sized(c[0], c[1]), c[1], self._loc(meta))
