"""The type checker's blocks: parsers, controls, their locals, instances, actions and tables.

A mixin of typecheck.Checker."""

from __future__ import annotations

import dataclasses
from typing import Any

from . import entry_priorities, ir
from .errors import CompileError, Location
from .typecheck_entities import (
    ActionEntity,
    AliasEntity,
    ConstEntity,
    ControlInstance,
    FunctionEntity,
    InstanceEntity,
    ParamEntity,
    Scope,
    StateEntity,
    TableEntity,
    TypedActionRef,
    TypedBlock,
    TypedEntry,
    TypedKey,
    TypeEntity,
    ValueSetEntity,
    VarEntity,
)
from .typecheck_exprs import with_defaults
from .typecheck_tree import (
    _is_constant,
    _lvalue_root,
    _referenced_params,
    key_name,
    p4c_can_name_key,
)


def list_keyset(keysets: tuple[ir.Expr, ...], count: int) -> tuple[ir.Expr, ...]:
    """An entry's keyset written as a list expression, `{a, b}` (or `{a}` for one key),
    stands for the tuple keyset `(a, b)`: p4c takes its elements as the keysets of the
    table's keys."""
    if len(keysets) == 1 and isinstance(keysets[0], ir.ListExpr) \
            and len(keysets[0].items) == count:
        return tuple(keysets[0].items)
    return keysets


class BlockChecks:
    # ------------------------------------------------------------ blocks

    def _unique(self, name: str) -> str:
        """p4c-style unique local names: x -> x_0, x_1, ..."""
        i = 0
        while f"{name}_{i}" in self.unique_names:
            i += 1
        u = f"{name}_{i}"
        self.unique_names.add(u)
        return u

    def _params(self, params: tuple[ir.Param, ...], scope: Scope, owner: str
                ) -> tuple[ParamEntity, ...]:
        out = []
        for i, p in enumerate(params):
            t = self.resolve_type(p.tref, scope)
            ent = ParamEntity(p.name, p.direction, t, owner, i, p.annotations, p.default)
            scope.declare(p.name, ent, p.loc)
            out.append(ent)
        return tuple(out)

    def check_parser(self, d: ir.ParserDecl, role: str,
                     ctor_args: tuple[tuple[str, ir.Expr], ...] = ()) -> TypedBlock:
        scope = Scope(self.globals, "parser", d.name)
        for name, value in ctor_args:   # `MyParser(false)` in main: compile-time constants
            scope.declare(name, ConstEntity(name, value), d.loc)
        params = self._params(d.params, scope, "parser")
        blk = TypedBlock("parser", d.name, role, params, loc=d.loc)
        self.block = blk
        for s in d.states:
            scope.declare(s.name, StateEntity(s.name), s.loc)
        for built_in in ("accept", "reject"):
            scope.names.setdefault(built_in, StateEntity(built_in))
        for loc_decl in d.locals:
            self.control_local(loc_decl, scope, blk)
        if not any(s.name == "start" for s in d.states):
            raise CompileError(d.loc, f"{d.name}: parser has no 'start' state")
        for s in d.states:
            sscope = Scope(scope, "state", d.name)
            stmts = tuple(self.stmt(x, sscope, "parser") for x in s.stmts)
            trans = self.transition(s.transition, sscope, s) if s.transition else None
            blk.states.append(ir.ParserState(s.name, stmts, trans, s.annotations, s.loc))
        self.block = None
        return blk

    def transition(self, t: ir.Transition, scope: Scope, state: ir.ParserState) -> ir.Transition:
        def target(name: str, loc: Location) -> str:
            if not isinstance(scope.lookup(name), StateEntity):
                raise CompileError(loc, f"{name}: no parser state of that name")
            return name

        if t.state is not None:
            return ir.Transition(target(t.state, t.loc), loc=t.loc)
        select = t.select
        if len(select) == 1 and isinstance(select[0], ir.ListExpr):
            select = select[0].items  # `select({a, b})`: the list's elements are the keys
        keys = tuple(self.expr(k, scope) for k in select)
        cases = []
        for c in t.cases:
            if len(c.keys) == 1 and len(keys) > 1 and \
                    (vs := self.struct_value_set(c.keys[0], keys, scope)) is not None:
                cases.append(ir.SelectCase((vs,), target(c.state, c.loc), c.loc))
                continue
            if len(c.keys) != len(keys) and not (len(c.keys) == 1
                                                  and isinstance(c.keys[0], ir.DefaultKey)):
                raise CompileError(c.loc, f"select case has {len(c.keys)} values for "
                                   f"{len(keys)} keys")
            if len(c.keys) == 1 and isinstance(c.keys[0], ir.DefaultKey):
                ks: tuple[ir.Expr, ...] = tuple(c.keys[0] for _ in keys)
            else:
                ks = tuple(self.keyset(k, key.type, scope) for k, key in zip(c.keys, keys,
                                                                                strict=True))
            cases.append(ir.SelectCase(ks, target(c.state, c.loc), c.loc))
        return ir.Transition(None, keys, tuple(cases), t.loc)

    def struct_value_set(self, k: ir.Expr, keys: tuple[ir.Expr, ...], scope: Scope
                         ) -> ir.Expr | None:
        """A `value_set<S>` as the one label of a select on several keys: S's fields
        match the keys one for one (P4_16 12.11); None if `k` is not a value set."""
        if not isinstance(k, ir.Name) or not isinstance(scope.lookup(k.name), ValueSetEntity):
            return None
        e = self.expr(k, scope)
        t = ir.unwrap(e.ref.type)  # type: ignore[attr-defined]
        fields = t.fields if isinstance(t, ir.StructLike) and t.kind == "struct" else ()
        if len(fields) != len(keys) or any(
                ir.unwrap(f.type) != ir.unwrap(key.type)  # type: ignore[arg-type]
                for f, key in zip(fields, keys, strict=True)):
            raise CompileError(k.loc, f"{k.name}: a value set in a select on {len(keys)} "
                               f"keys needs a struct type whose fields have the keys' types")
        return e

    def keyset(self, k: ir.Expr, t: ir.Type | None, scope: Scope) -> ir.Expr:
        if isinstance(k, ir.DefaultKey):
            return k
        if isinstance(t, ir.Enum) and t.underlying is not None:
            t = t.underlying  # keysets on a serializable enum match its underlying values
        if isinstance(k, ir.MaskKey):
            return ir.MaskKey(self.coerce(self.expr(k.value, scope, t), t, k.loc),
                              self.coerce(self.expr(k.mask, scope, t), t, k.loc), k.loc, t)
        if isinstance(k, ir.RangeKey):
            return ir.RangeKey(self.coerce(self.expr(k.lo, scope, t), t, k.loc),
                               self.coerce(self.expr(k.hi, scope, t), t, k.loc), k.loc, t)
        e = self.expr(k, scope, t)
        if isinstance(e, ir.Name) and isinstance(e.ref, ValueSetEntity):
            return e
        return self.coerce(e, t, k.loc)

    def check_control(self, d: ir.ControlDecl, role: str,
                      ctor_args: tuple[tuple[str, ir.Expr], ...] = ()) -> TypedBlock:
        from .passes.local_initializers import move_initializers_with_calls
        d, scope = move_initializers_with_calls(d), Scope(self.globals, "control", d.name)
        for name, value in ctor_args:
            scope.declare(name, ConstEntity(name, value), d.loc)
        params = self._params(d.params, scope, "control")
        blk = TypedBlock("control", d.name, role, params, loc=d.loc)
        self.block = blk
        for loc_decl in d.locals:
            self.control_local(loc_decl, scope, blk)
        body = self.stmt(d.body, Scope(scope, "apply", d.name), "control")
        assert isinstance(body, ir.Block)
        self.check_uninitialized(body, ())
        blk.body = body
        self.block = None
        return blk

    def control_local(self, d: ir.Node, scope: Scope, blk: TypedBlock,
                      prefix: str | None = None) -> None:
        outer, prefix = prefix, prefix or blk.name
        if isinstance(d, ir.ConstDecl):
            self.declare_const(d, scope)
        elif isinstance(d, ir.VarDecl):
            decl = self.var_decl(d, scope)
            blk.local_decls.append((outer, decl))
        elif isinstance(d, ir.Instantiation):
            inst = self.instantiate(d, scope, prefix)
            if isinstance(inst, InstanceEntity):
                blk.instances.append(inst)
        elif isinstance(d, ir.ValueSetDecl):
            t = self.resolve_type(d.tref, scope)
            size = self.const_int(self.expr(d.size, scope), scope)
            vs = ValueSetEntity(d.name, self.qualify(d.name, d.annotations, prefix), t, size,
                                d.annotations, d.loc)
            scope.declare(d.name, vs, d.loc)
            blk.value_sets.append(vs)
        elif isinstance(d, ir.ActionDecl):
            a = self.make_action(d, scope, prefix)
            scope.declare(d.name, a, d.loc)
            blk.actions.append(a)
        elif isinstance(d, ir.TableDecl):
            t = self.make_table(d, scope, blk, prefix)
            scope.declare(d.name, t, d.loc)
            blk.tables.append(t)
        elif isinstance(d, ir.FunctionDecl):
            scope.declare(d.proto.name, FunctionEntity(d.proto.name, d), d.loc)
        else:
            raise CompileError(getattr(d, "loc", None),
                               f"unsupported declaration {type(d).__name__} in {blk.name}")

    def qualify(self, name: str, annotations: tuple[ir.Annotation, ...], block: str | None) -> str:
        """The control-plane name as p4c's front end assigns it."""
        explicit = ir.annotation_string(annotations, "name")
        if explicit is not None:
            if explicit.startswith("."):
                return explicit[1:]
            name = explicit
        return f"{block}.{name}" if block else name

    def var_decl(self, d: ir.VarDecl, scope: Scope) -> ir.VarDecl:
        t = self.resolve_type(d.tref, scope)
        init = None
        if d.init is not None:
            init = self.coerce(self.expr(d.init, scope, t), t, d.loc)
        ent = VarEntity(d.name, t, self._unique(d.name))
        scope.declare(d.name, ent, d.loc)
        self.add_variable(ent)
        return ir.VarDecl(d.tref, ent.unique, init, d.annotations, d.loc, t)

    def add_variable(self, ent: VarEntity) -> None:
        if self.block is not None:
            self.block.variables.append(ent)
        else:   # locals of global actions: laid out with the first block
            self.orphan_variables.append(ent)

    def new_temp(self, base: str, t: ir.Type, loc: Location) -> ir.Name:
        """A fresh compiler-generated local (`retval_0`, `hsiVar_0`, ...) as a Name."""
        if isinstance(t, ir.InfInt):
            t = ir.Bits(32)
        ent = VarEntity(base, t, self._unique(base))
        self.add_variable(ent)
        self.temp_names.add(ent.unique)
        return ir.Name(ent.unique, loc, t, ent)

    @staticmethod
    def temp_decl(name: ir.Name, init: ir.Expr | None, loc: Location) -> ir.Stmt:
        assert isinstance(name.ref, VarEntity)
        return ir.VarDecl(ir.TypeRef("name", name=str(name.type)), name.ref.unique, init, (),
                          loc, name.type)

    def instantiate(self, d: ir.Instantiation, scope: Scope, block: str) -> Any:
        t = self.resolve_type(d.tref, scope)
        if isinstance(t, ir.ExternT):
            ext = self.globals.lookup(t.name).decl
            ctors = [m for m in ext.methods if m.ret is None]
            ctor = next((c for c in ctors if len(c.params) == len(d.args)), None)
            if not ctors:  # as p4c: `packet_in() p;` (p4_16_bmv_errors/packet_in-bmv2.p4)
                raise CompileError(d.loc, f"{d.name}: type {t.name} has no matching "
                                   "constructor")
            if ctor is None:
                counts = " or ".join(str(len(c.params)) for c in ctors)
                raise CompileError(d.loc, f"{t.name}: constructor expects {counts} arguments, "
                                   f"got {len(d.args)}")
            args = []
            for a, p in zip(d.args, ctor.params if ctor else (), strict=False):
                pt = self.resolve_type(p.tref, self._generic_scope(ext, t))
                assert a.value is not None
                e = self.expr(a.value, scope, pt if not isinstance(pt, ir.TypeVar) else None)
                args.append(self.ctor_value(e, pt))
            inst = InstanceEntity(d.name, self.qualify(d.name, d.annotations, block), t,
                                  tuple(args), d, d.annotations)
            scope.declare(d.name, inst, d.loc)
            return inst
        if isinstance(t, ir.BlockT) and t.kind == "control" and block:
            ent = self.globals.lookup(t.name)
            ctor_args = self.ctor_args(ent.decl, d.args, scope, d.loc)
            prefix = self.qualify(d.name, d.annotations, block)
            inst = ControlInstance(d.name, prefix, ent.decl, ctor_args)
            first_name, first_loc = self.control_instances.setdefault(prefix, (d.name, d.loc))
            if first_loc != d.loc:
                if first_name == f"{t.name}_inst" and d.name == t.name:
                    # `C() C;` and `C.apply()`: the call names that instance (as in p4c),
                    # not the one the parser declared for a directly applied type.
                    scope.names[first_name] = inst
                else:
                    raise CompileError(d.loc, f"two control instances are named {prefix} "
                                       f"(the other at {first_loc.file}:{first_loc.line}; a "
                                       "directly applied control type is an instance named "
                                       "after its type)")
            scope.declare(d.name, inst, d.loc)
            return inst
        if isinstance(t, ir.BlockT):
            raise CompileError(d.loc, f"instantiating {t.kind} {t.name} here is not supported")
        raise CompileError(d.loc, f"{t}: cannot instantiate this type")

    def ctor_args(self, decl: Any, args: tuple[ir.Arg, ...], scope: Scope, loc: Location
                  ) -> tuple[tuple[str, ir.Expr], ...]:
        """Constructor arguments of a parser/control: compile-time constants."""
        params = decl.ctor_params
        if any(a.name for a in args):
            by_name = {a.name: a for a in args}
            if set(by_name) != {p.name for p in params}:
                raise CompileError(loc, f"{decl.name}: constructor arguments do not match "
                                   f"its parameters ({', '.join(p.name for p in params)})")
            args = tuple(by_name[p.name] for p in params)
        if len(args) != len(params):
            raise CompileError(loc, f"{decl.name}: constructor expects {len(params)} "
                               f"arguments, got {len(args)}")
        out = []
        for a, p in zip(args, params, strict=True):
            pt = self.resolve_type(p.tref, self.globals)
            assert a.value is not None
            if isinstance(pt, ir.BlockT) and isinstance(a.value, ir.Name) and isinstance(
                    inst := scope.lookup(a.value.name), ControlInstance):
                out.append((p.name, inst))  # a control instance (`C2(c1) c2;`)
                continue
            v = self.coerce(self.expr(a.value, scope, pt), pt, a.loc)
            if not _is_constant(v):
                raise CompileError(a.loc, f"{decl.name}: constructor argument {p.name} must be "
                                   "a compile-time constant")
            out.append((p.name, v))
        return tuple(out)

    def ctor_value(self, e: ir.Expr, param_type: ir.Type | None = None) -> Any:
        if isinstance(e, ir.Member) and isinstance(e.type, ir.Enum) and e.type.underlying \
                and isinstance(param_type, ir.Bits):
            # a serializable enum member for a bit<N> parameter (`counter(sizes.N, ...)`):
            # its value, by the implicit cast to the underlying type (P4_16 8.3)
            return e.type.values[e.type.members.index(e.member)]
        if isinstance(e, ir.Lit):
            return e.value
        if isinstance(e, ir.BoolLit):
            return e.value
        if isinstance(e, ir.StrLit):
            return e.value
        if isinstance(e, ir.Member) and isinstance(e.type, ir.Enum):
            return e.member
        if isinstance(e, ir.Call) and isinstance(e.callee, ir.TypeName):
            return e
        raise CompileError(getattr(e, "loc", None), "constructor arguments must be constants")

    def _generic_scope(self, ext: ir.ExternDecl, t: ir.ExternT) -> Scope:
        s = Scope(self.globals, "generic")
        for name in ext.type_params:
            s.names[name] = TypeEntity(ir.TypeVar(name))
        for name, ty in zip(ext.type_params, t.type_args, strict=False):
            s.names[name] = TypeEntity(ty)
        return s

    # ------------------------------------------------------------ actions, tables

    def make_action(self, d: ir.ActionDecl, scope: Scope, block: str | None) -> ActionEntity:
        ascope = Scope(scope, "action", block or "")
        params = self._params(d.params, ascope, "action")
        seen_directionless = False
        for p in params:
            if not p.direction:
                seen_directionless = True
            elif seen_directionless:
                raise CompileError(d.loc, f"{d.name}: directionless parameters must come last")
        body = self.stmt(d.body, ascope, "action")
        assert isinstance(body, ir.Block)
        self.check_uninitialized(body, ())
        used = _referenced_params(body)
        for p, decl in zip(params, d.params, strict=True):
            if id(p) not in used and d.name != "NoAction":
                self.diags.warn(decl.loc, f"unused action parameter {p.name}")
        qualified = self.qualify(d.name, d.annotations, block)
        return ActionEntity(d.name, qualified, params, body, d.annotations, d.loc, d, block)

    def action_ref(self, r: ir.ActionRef, scope: Scope, table: str, partial: bool
                   ) -> TypedActionRef:
        a = scope.lookup(r.name)
        if not isinstance(a, ActionEntity):
            if a is None:
                raise CompileError(r.loc, f"{r.name}: undeclared action")
            raise CompileError(r.loc, f"{r.name} is not an action")
        args = r.args or ()
        if r.args is not None and not partial:
            args = with_defaults(args, a.params)
        need = a.params if not partial else tuple(p for p in a.params if p.direction)
        if r.args is not None or not partial:
            if len(args) != len(need) and not (partial and len(args) == len(a.params)):
                raise CompileError(r.loc, f"{r.name}: expects {len(need)} arguments, "
                                   f"got {len(args)}")
        typed = []
        for arg, p in zip(args, a.params, strict=False):
            assert arg.value is not None
            typed.append(self.coerce(self.expr(arg.value, scope, p.type), p.type, arg.loc))
        return TypedActionRef(a, tuple(typed), r.annotations)

    def make_table(self, d: ir.TableDecl, scope: Scope, blk: TypedBlock, prefix: str
                   ) -> TableEntity:
        keys = [self.table_key(k, scope) for k in d.key]
        if not d.actions:
            raise CompileError(d.loc, f"{d.name}: table has no actions property")
        actions = tuple(self.action_ref(r, scope, d.name, True) for r in d.actions)
        if all(a.action.name == "NoAction" for a in actions):
            self.diags.warn(d.loc, f"{d.name}: table has no actions other than NoAction")
        names = [a.action.qualified for a in actions]
        for a in actions:
            if names.count(a.action.qualified) > 1:
                raise CompileError(d.loc, f"{d.name}: action {a.action.name} listed twice")
        default = None
        if d.default_action is not None:
            default = self.action_ref(d.default_action, scope, d.name, False)
            if default.action.qualified not in names:
                raise CompileError(d.default_action.loc, f"{d.name}: default action "
                                   f"{default.action.name} is not in the actions list")
        entries = self.table_entries(d, keys, names, scope) if d.entries is not None \
            else None
        size = None
        impl = counters = meters = None
        timeout = False
        props: dict[str, Any] = {}
        for p in d.properties:
            if p.name == "size":
                size = self.const_int(self.expr(p.value, scope), scope)
            elif p.name in ("implementation", "counters", "meters"):
                inst = self.table_instance(p, scope, blk, d.name, prefix)
                if p.name == "implementation":
                    impl = inst
                elif p.name == "counters":
                    counters = inst
                else:
                    meters = inst
            elif p.name == "support_timeout":
                v = self.expr(p.value, scope)
                timeout = isinstance(v, ir.BoolLit) and v.value
            else:
                props[p.name] = self.expr(p.value, scope)
        return TableEntity(d.name, self.qualify(d.name, d.annotations, prefix), tuple(keys),
                           actions, default, d.default_const, entries, d.entries_const, size,
                           impl, counters,
                           meters, timeout, d.annotations, d.loc, props)

    def table_key(self, k, scope: Scope) -> TypedKey:
        """One key field: its expression typed, its match kind known, its control-plane
        name (p4c's, or the @name a complex expression needs)."""
        e = self.expr(k.expr, scope)
        if k.match_kind not in self.match_kinds:
            raise CompileError(k.loc, f"{k.match_kind}: unknown match kind")
        if not isinstance(ir.unwrap(e.type), (ir.Bits, ir.Bool, ir.Enum, ir.ErrorT)):
            raise CompileError(k.loc, f"table key of type {e.type} cannot be matched")
        root = _lvalue_root(k.expr)
        # A parameter of an inlined control keeps its own name (p4c names keys
        # before inlining).
        aliased = isinstance(root, ir.Name) and isinstance(scope.lookup(root.name),
                                                           AliasEntity)
        name = ir.annotation_string(k.annotations, "name")
        if name is None and not p4c_can_name_key(k.expr):
            raise CompileError(k.loc, f"{key_name(k.expr)}: Complex key expression "
                               "requires a @name annotation")
        name = name or key_name(k.expr if aliased else e)
        return TypedKey(e, k.match_kind, name, k.annotations)

    def table_entries(self, d: ir.TableDecl, keys: list[TypedKey], names: list[str],
                      scope: Scope) -> tuple[TypedEntry, ...]:
        """The table's `entries`, typed, with their priorities."""
        entries = []
        given: list[int | None] = []
        for en in d.entries:
            en = dataclasses.replace(en, keys=list_keyset(en.keys, len(keys)))
            if len(en.keys) != len(keys):
                raise CompileError(en.loc, f"entry has {len(en.keys)} keys, table "
                                   f"{d.name} has {len(keys)}")
            ks = tuple(self.keyset(x, k.expr.type, scope) for x, k in zip(en.keys, keys,
                                                                          strict=True))
            act = self.action_ref(en.action, scope, d.name, False)
            if act.action.qualified not in names:
                raise CompileError(en.loc, f"{act.action.name} is not an action of "
                                   f"table {d.name}")
            prio = None
            prio_ann = ir.annotation(en.annotations, "priority")
            if en.priority is not None:
                given.append(self.const_int(self.expr(en.priority, scope), scope))
            else:
                given.append(None)
                if prio_ann is not None and prio_ann.args:
                    prio = self.const_int(self.expr(prio_ann.args[0], scope), scope)
            entries.append(TypedEntry(ks, act, prio, en.loc))
        return tuple(self.entry_priorities(d, entries, given, scope))

    def entry_priorities(self, d: ir.TableDecl, entries: list[TypedEntry],
                         given: list[int | None], scope: Scope) -> list[TypedEntry]:
        """The entries with bmv2 priorities from `priority = N:` (entry_priorities.py)."""
        props = {p.name: p for p in d.properties}
        largest_wins, delta = True, 1
        if "largest_priority_wins" in props:
            v = self.expr(props["largest_priority_wins"].value, scope)
            if not isinstance(v, ir.BoolLit):
                raise CompileError(props["largest_priority_wins"].loc,
                                   "largest_priority_wins must be true or false")
            largest_wins = v.value
        if "priority_delta" in props:
            delta = self.const_int(self.expr(props["priority_delta"].value, scope), scope)
        p4 = entry_priorities.p4_priorities(given, largest_wins, delta, d.entries_const,
                                            [e.loc for e in entries], d.name)
        if p4 is None:
            return entries
        bmv2 = entry_priorities.bmv2_priorities(p4, largest_wins)
        return [dataclasses.replace(e, priority=b) for e, b in zip(entries, bmv2, strict=True)]

    def table_instance(self, p: ir.TableProperty, scope: Scope, blk: TypedBlock, table: str,
                       prefix: str) -> InstanceEntity:
        v = p.value
        if isinstance(v, ir.Name):
            inst = scope.lookup(v.name)
            if not isinstance(inst, InstanceEntity):
                raise CompileError(p.loc, f"{v.name}: not an extern instance")
            return inst
        if isinstance(v, ir.Call) and isinstance(v.callee, ir.TypeName):
            # An anonymous instance (`implementation = action_profile(128)`): p4c names it
            # after the table, or takes a @name on the property as its whole name (not
            # qualified by the control). The property's other annotations are the
            # instance's (p4c's getTableImplementationAnnotations: @max_group_size).
            anns = tuple(a for a in p.annotations if a.name != "name")
            d = ir.Instantiation(v.callee.tref, v.args, table, anns, p.loc)
            inner = Scope(scope)
            inst = self.instantiate(d, inner, prefix)
            explicit = ir.annotation_string(p.annotations, "name")
            if explicit is not None:
                inst.qualified = explicit.removeprefix(".")
            blk.instances.append(inst)
            return inst
        raise CompileError(p.loc, f"{p.name}: expected an extern instance")
