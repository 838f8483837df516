"""The type checker's statements, and their lowering: calls lifted out of expressions,
functions and sub-controls inlined, run-time stack indices made concrete.

A mixin of typecheck.Checker."""

from __future__ import annotations

import dataclasses
from typing import Any

from . import hs_index, ir, loops
from .errors import CompileError, Location
from .typecheck_entities import (
    ActionEntity,
    AliasEntity,
    ConstEntity,
    ControlInstance,
    InstanceEntity,
    ParamEntity,
    Scope,
    VarEntity,
)
from .typecheck_exprs import with_defaults
from .typecheck_tree import (
    _always_leaves,
    _inline_calls,
    _is_constant,
    _is_lvalue_path,
    _is_num,
    _overlaps,
    _rewrite,
    _scope_attr,
    _Uninit,
    _walk,
)


class StatementChecks:
    # ------------------------------------------------------------ statements

    def stmt(self, s: ir.Stmt, scope: Scope, ctx: str) -> ir.Stmt:
        typed = self._stmt(s, scope, ctx)
        if isinstance(typed, (ir.Block, ir.Empty, ir.Exit, ir.Loop, ir.Break, ir.Continue)):
            return typed
        return self.finish(typed, ctx)

    def _stmt(self, s: ir.Stmt, scope: Scope, ctx: str) -> ir.Stmt:
        if isinstance(s, ir.ForInStack):  # frontend hook: needs the stack's size
            stack = ir.unwrap(self.expr(s.collection, scope).type)
            if isinstance(stack, ir.TupleT):  # a tuple or list value: one per component
                return self._stmt(loops.unroll_for_in_stack(s, len(stack.items), False),
                                  scope, ctx)
            if not isinstance(stack, ir.Stack):
                raise CompileError(s.loc, f"for loop over {stack}: expected a header "
                                   "stack, a tuple or a range lo .. hi")
            return self._stmt(loops.unroll_for_in_stack(s, stack.size), scope, ctx)
        if isinstance(s, ir.Block):
            inner = Scope(scope, scope.kind, scope.prefix)
            stmts = tuple(self.stmt(x, inner, ctx) for x in s.stmts)
            self.warn_unreachable(stmts)
            return ir.Block(stmts, s.loc)
        if isinstance(s, ir.Loop):
            return self.run_time_loop(s, scope, ctx)
        if isinstance(s, (ir.Break, ir.Continue)):
            return s  # a run-time loop's own (loops.find_stray_jump found the others)
        if isinstance(s, ir.Assign):
            self.check_alias_write(s.lhs, scope, s.loc)
            lhs = self.expr(s.lhs, scope)
            self.check_lvalue(lhs, s.loc)
            rhs = self.coerce(self.expr(s.rhs, scope, lhs.type), lhs.type, s.loc)
            return ir.Assign(lhs, rhs, s.loc)
        if isinstance(s, ir.CallStmt):
            call = self.expr(s.call, scope)
            if isinstance(call, ir.BoolLit):  # a static_assert that held
                return ir.Empty(s.loc)
            if not isinstance(call, ir.Call):
                raise CompileError(s.loc, "expected a call")
            return ir.CallStmt(call, s.loc)
        if isinstance(s, ir.If):
            cond = self.expr(s.cond, scope, ir.Bool())
            if not isinstance(cond.type, ir.Bool):
                raise CompileError(s.loc, f"if condition must be bool, not {cond.type}")
            then = self.stmt(s.then, Scope(scope, scope.kind, scope.prefix), ctx)
            other = self.stmt(s.other, Scope(scope, scope.kind, scope.prefix), ctx) \
                if s.other else None
            return ir.If(cond, then, other, s.loc)
        if isinstance(s, ir.VarDecl):
            return self.var_decl(s, scope)
        if isinstance(s, ir.ConstDecl):
            self.declare_const(s, scope)
            return ir.Empty(s.loc)
        if isinstance(s, (ir.Empty, ir.Exit)):
            if isinstance(s, ir.Exit) and ctx == "parser":
                raise CompileError(s.loc, "exit is not allowed in a parser")
            return s
        if isinstance(s, ir.Return):
            ret_t = _scope_attr(scope, "ret_type")
            if s.value is not None:
                if ctx != "function":
                    raise CompileError(s.loc, "return with a value outside a function")
                if isinstance(ret_t, ir.Void):
                    raise CompileError(s.loc, "return with a value in a void function")
                return ir.Return(self.coerce(self.expr(s.value, scope, ret_t), ret_t, s.loc),
                                 s.loc)
            if ctx == "function" and ret_t is not None and not isinstance(ret_t, ir.Void):
                raise CompileError(s.loc, f"return without a value in a function returning "
                                   f"{ret_t}")
            return s
        if isinstance(s, ir.Switch):
            return self.switch(s, scope, ctx)
        raise CompileError(getattr(s, "loc", None), f"unsupported statement {type(s).__name__}")

    def run_time_loop(self, s: ir.Loop, scope: Scope, ctx: str) -> ir.Loop:
        """A `for` loop the front end could not unroll: bmv2 runs it in an action."""
        if ctx == "parser":
            raise CompileError(s.loc, "this for loop's iterations are known only at run "
                               "time, and bmv2 cannot loop inside a parser state")
        inner = Scope(scope, scope.kind, scope.prefix)
        init = tuple(self.stmt(x, inner, ctx) for x in s.init)
        cond = self.expr(s.cond, inner, ir.Bool())
        if not isinstance(cond.type, ir.Bool):
            raise CompileError(s.loc, f"for loop condition must be bool, not {cond.type}")
        if _inline_calls(cond):
            raise CompileError(s.loc, "a call in the condition of a for loop whose "
                               "iterations are known only at run time is not supported")
        body = self.stmt(s.body, Scope(inner, inner.kind, inner.prefix), ctx)
        updates = tuple(self.stmt(x, inner, ctx) for x in s.updates)
        for node in (body, *updates):
            if any(isinstance(x, ir.Return) for x in _walk(node)):
                raise CompileError(s.loc, "return inside a for loop whose iterations are "
                                   "known only at run time is not supported")
        return ir.Loop(init, cond, updates, body, s.loc)

    def switch(self, s: ir.Switch, scope: Scope, ctx: str) -> ir.Switch:
        e = self.expr(s.expr, scope)
        cases = []
        seen: set[Any] = set()
        for i, c in enumerate(s.cases):
            if i and s.cases[i - 1].label is None:  # p4c's ValidateParsedProgram
                self.diags.warn(c.loc, "label following default label")
            label = None
            if c.label is not None:
                if isinstance(e.type, ir.ActionEnum):
                    if not isinstance(c.label, ir.Name):
                        raise CompileError(c.loc, "switch on action_run needs action names")
                    a = scope.lookup(c.label.name)
                    if not isinstance(a, ActionEntity):
                        raise CompileError(c.loc, f"{c.label.name}: not an action")
                    label = ir.Name(c.label.name, c.label.loc, e.type, a)
                    key: Any = a.qualified
                else:
                    label = self.coerce(self.expr(c.label, scope, e.type), e.type, c.loc)
                    key = label.value if isinstance(label, ir.Lit) else (
                        ("member", label.member) if isinstance(label, ir.Member) else id(label))
                if key in seen:
                    raise CompileError(c.loc, "duplicate switch label")
                seen.add(key)
            body = self.stmt(c.body, scope, ctx) if c.body is not None else None
            cases.append(ir.SwitchCase(label, body, c.loc))  # type: ignore[arg-type]
        if not isinstance(e.type, ir.ActionEnum) and not _is_num(e.type) \
                and not isinstance(e.type, ir.Enum):
            raise CompileError(s.loc, f"cannot switch on a value of type {e.type}")
        return ir.Switch(e, tuple(cases), s.loc)

    def check_lvalue(self, e: ir.Expr, loc: Location) -> None:
        base = e
        while isinstance(base, (ir.Member, ir.Index, ir.Slice)):
            base = base.expr
        if isinstance(base, ir.Name) and isinstance(base.ref, (ParamEntity, VarEntity)):
            ref = base.ref
            if isinstance(ref, ParamEntity) and ref.direction in ("in", ""):
                if ref.owner != "action" or ref.direction == "in":
                    raise CompileError(loc, f"cannot assign to {ref.name}: it is a read-only "
                                       f"parameter")
            return
        raise CompileError(loc, "the left-hand side of an assignment must be a variable, "
                           "parameter or field")

    # ------------------------------------------------------------ statement lowering

    def finish(self, s: ir.Stmt, ctx: str) -> ir.Stmt:
        """Lowerings p4c's front/mid end does per statement: inline functions whose body
        is more than `return expr;` (copy-in/copy-out), then replace run-time header stack
        indices by an if/else chain over the constant indices (HSIndexSimplifier)."""
        pre: list[ir.Stmt] = []
        s = self.lift_calls(s, pre)
        if s is None:
            out: list[ir.Stmt] = pre
        else:
            out = pre + [s]
        out = [self.concretize(x) for x in out]
        return out[0] if len(out) == 1 else ir.Block(tuple(out), getattr(s, "loc", None)
                                                      or out[0].loc)  # type: ignore

    def lift_calls(self, s: ir.Stmt, pre: list[ir.Stmt]) -> ir.Stmt | None:
        if not _inline_calls(s):
            return s
        lift = self.lift_expr
        if isinstance(s, ir.CallStmt):
            call = s.call
            args = tuple(dataclasses.replace(a, value=lift(a.value, pre, False))
                         if a.value is not None else a for a in call.args)
            call = dataclasses.replace(call, args=args)
            if call.target and call.target[0] == "inline_function":
                self.expand_call(call, pre)
                return None
            return ir.CallStmt(call, s.loc)
        if isinstance(s, ir.Assign):
            lhs = lift(s.lhs, pre, False)
            if _inline_calls(s.rhs):   # the target is evaluated before the value
                from .passes.short_circuit import freeze_indices
                lhs = freeze_indices(self, lhs, pre)
            return ir.Assign(lhs, lift(s.rhs, pre, False), s.loc)
        if isinstance(s, ir.If):
            return dataclasses.replace(s, cond=lift(s.cond, pre, False))
        if isinstance(s, ir.VarDecl) and s.init is not None:
            return dataclasses.replace(s, init=lift(s.init, pre, False))
        if isinstance(s, ir.Switch):
            return dataclasses.replace(s, expr=lift(s.expr, pre, False))
        if isinstance(s, ir.Return) and s.value is not None:
            return dataclasses.replace(s, value=lift(s.value, pre, False))
        return s

    def lift_expr(self, e: Any, pre: list[ir.Stmt], guarded: bool) -> Any:
        """`e` with calls of inlined functions replaced by their result temporaries (the
        inlined statements go to `pre`, in evaluation order)."""
        if not isinstance(e, ir.Expr) or not _inline_calls(e):
            return e
        from .passes import short_circuit  # the passes package imports this module
        if isinstance(e, ir.Binary) and e.op in ("&&", "||"):
            if short_circuit.has_side_effect_call(e.right):
                return short_circuit.lower_and_or(self, e, pre)
            return dataclasses.replace(e, left=self.lift_expr(e.left, pre, guarded),
                                       right=self.lift_expr(e.right, pre, True))
        if isinstance(e, ir.Mux):
            if short_circuit.has_side_effect_call(e.then, e.other):
                return short_circuit.lower_mux(self, e, pre)
            return dataclasses.replace(e, cond=self.lift_expr(e.cond, pre, guarded),
                                       then=self.lift_expr(e.then, pre, True),
                                       other=self.lift_expr(e.other, pre, True))
        if isinstance(e, ir.Call):
            if isinstance(e.callee, ir.Member) and _inline_calls(e.callee.expr):
                # a method of a call's result (`f().isValid()`): the receiver comes first
                e = dataclasses.replace(e, callee=dataclasses.replace(
                    e.callee, expr=self.lift_expr(e.callee.expr, pre, guarded)))
            args = tuple(dataclasses.replace(a, value=self.lift_expr(a.value, pre, guarded))
                         if a.value is not None else a for a in e.args)
            e = dataclasses.replace(e, args=args)
            if e.target and e.target[0] == "inline_function":
                result = self.expand_call(e, pre)
                if result is None:
                    raise CompileError(e.loc, f"{e.target[1]} returns no value")
                return result
            return e
        return short_circuit.lift_operands(self, e, pre, guarded)

    def expand_call(self, call: ir.Call, pre: list[ir.Stmt]) -> ir.Expr | None:
        """Inline one function call: copy-in, the body without returns, copy-out."""
        _, name, body, proto, params, _ = call.target
        loc = call.loc
        subst: dict[int, ir.Expr] = {}
        post: list[ir.Stmt] = []
        for p, a in zip(params, call.args, strict=True):
            v = a.value
            direction = p.direction or "in"
            if direction == "in" and _is_constant(v):
                subst[id(p)] = v
                continue
            tmp = self.new_temp(p.name, p.type, loc)
            subst[id(p)] = tmp
            if direction == "out" and v is None:
                pre.append(self.temp_decl(tmp, None, loc))
                continue
            pre.append(self.temp_decl(tmp, v if direction in ("in", "inout") else None, loc))
            if direction in ("out", "inout") and v is not None:
                from .passes.short_circuit import freeze_indices  # copy-out target: now
                post.append(ir.Assign(freeze_indices(self, v, pre), tmp, loc))
        new_body = _rewrite(body, lambda x: subst.get(id(x.ref))
                            if isinstance(x, ir.Name) and isinstance(x.ref, ParamEntity)
                            else None)
        ret_t = call.type
        retval = None if isinstance(ret_t, ir.Void) or ret_t is None \
            else self.new_temp("retval", ret_t, loc)
        if retval is not None:
            pre.append(self.temp_decl(retval, None, loc))
        pre.extend(self.remove_returns(list(new_body.stmts), retval, loc))
        pre.extend(post)
        return retval

    def remove_returns(self, stmts: list[ir.Stmt], retval: ir.Name | None, loc: Location
                       ) -> list[ir.Stmt]:
        """A function body without `return` (passes/remove_returns.py)."""
        from .passes.remove_returns import remove_returns  # passes import this module

        def make_flag() -> tuple[ir.Name, ir.Stmt]:
            flag = self.new_temp("hasReturned", ir.Bool(), loc)
            return flag, self.temp_decl(flag, ir.BoolLit(False, loc), loc)
        return remove_returns(stmts, retval, make_flag)

    def concretize(self, s: ir.Stmt) -> ir.Stmt:
        """Run-time header stack indices made concrete (`hs_index`, p4c's
        HSIndexSimplifier)."""
        return hs_index.concretize(s, self.new_temp, self.temp_decl)

    def warn_once(self, loc: Location | None, message: str) -> None:
        key = (str(loc), message)
        if key not in self.warned:
            self.warned.add(key)
            self.diags.warn(loc, message)

    def check_uninitialized(self, body: ir.Block, params: tuple[ParamEntity, ...]) -> None:
        """p4c's "may be uninitialized" warnings: scalar locals declared without an
        initializer (and out parameters of functions) read before every path assigns
        them. Action calls and table applies count as assigning everything (actions
        may write control locals)."""
        tracked: dict[str, str] = {}
        for n in _walk(body):
            if isinstance(n, ir.VarDecl) and n.init is None and n.name not in self.temp_names \
                    and isinstance(ir.unwrap(n.type), (ir.Bits, ir.Bool, ir.Enum)):  # type: ignore
                tracked[n.name] = n.name.rsplit("_", 1)[0]
        outs = {f"param:{id(p)}": p.name for p in params if p.direction == "out"
                and isinstance(ir.unwrap(p.type), (ir.Bits, ir.Bool, ir.Enum))}
        tracked.update(outs)
        if not tracked:
            return
        end = _Uninit(self, tracked).block(list(body.stmts), set())
        if end is not None:
            for key, name in outs.items():
                if key not in end:
                    self.warn_once(body.loc, f"out parameter {name} may be uninitialized "
                                   "when the function ends")

    def warn_unreachable(self, stmts: tuple[ir.Stmt, ...]) -> None:
        for i, x in enumerate(stmts[:-1]):
            if isinstance(x, (ir.Exit, ir.Return)) or (isinstance(x, ir.If)
                                                        and _always_leaves(x)):
                rest = [y for y in stmts[i + 1:] if not isinstance(y, ir.Empty)]
                if rest:
                    self.diags.warn(getattr(rest[0], "loc", None), "unreachable code")
                return

    def check_alias_write(self, lhs: ir.Expr, scope: Scope, loc: Location) -> None:
        base = lhs
        while isinstance(base, (ir.Member, ir.Index, ir.Slice)):
            base = base.expr
        if isinstance(base, ir.Name):
            ent = scope.lookup(base.name)
            if isinstance(ent, AliasEntity) and ent.direction in ("", "in"):
                raise CompileError(loc, f"cannot assign to {ent.name}: it is a read-only "
                                   "parameter")

    def inline_control(self, e: ir.Call, fn: ir.Member, scope: Scope) -> ir.Expr:
        """`inst.apply(args)`: check the instantiated control's body in place; its
        locals join the enclosing block under the instance's name."""
        assert isinstance(fn.expr, ir.Name)
        inst: ControlInstance = fn.expr.ref
        d: ir.ControlDecl = inst.decl
        args = _apply_args(e, d)
        blk = self.block
        assert blk is not None
        inner = Scope(self.globals, "control", inst.prefix)
        for name, value in inst.ctor_args:
            inner.declare(name, value if isinstance(value, ControlInstance)
                          else ConstEntity(name, value), d.loc)
        typed = []
        for arg, p in zip(args, d.params, strict=True):
            if arg.value is None:
                raise CompileError(arg.loc, f"{d.name}.apply: {p.name} needs an argument")
            pt = self.resolve_type(p.tref, self.globals)
            v = self.coerce(self.expr(arg.value, scope, pt), pt, arg.loc)
            if p.direction in ("out", "inout"):
                self.check_lvalue(v, arg.loc)
            typed.append((p, pt, v))
        # p4c's inliner passes lvalue arguments directly unless they alias another
        # argument that the control may write; anything else goes through a temporary
        # (copy-in before the body, copy-out after it).
        copy_in: list[ir.Stmt] = []
        copy_out: list[ir.Stmt] = []
        # An `out` argument starts with its headers invalid (p4c resets them at the
        # inlined apply: DoResetHeaders::generateResets), whether passed directly or
        # through a temporary.
        for i, (p, pt, v) in enumerate(typed):
            writable = p.direction in ("out", "inout")
            aliased = any(_overlaps(v, w) and (writable or q.direction in ("out", "inout"))
                          for j, (q, _, w) in enumerate(typed) if j != i)
            if isinstance(v, ir.Name) and isinstance(v.ref, InstanceEntity):
                inner.declare(p.name, v.ref, p.loc)  # an extern object: the object itself
            elif isinstance(v, ir.Name) and isinstance(v.ref, ParamEntity) \
                    and v.ref.owner == "control" and v.type == pt and not aliased:
                inner.declare(p.name, ParamEntity(p.name, p.direction, pt, "control",
                                                  v.ref.index, p.annotations), p.loc)
                if p.direction == "out":
                    copy_in.extend(_header_resets(v, pt, e.loc))
            elif p.direction in ("", "in") and _is_constant(v):
                inner.declare(p.name, AliasEntity(p.name, v, "in"), p.loc)
            elif _is_lvalue_path(v) and not aliased:
                inner.declare(p.name, AliasEntity(p.name, v, p.direction), p.loc)
                if p.direction == "out":
                    copy_in.extend(_header_resets(v, pt, e.loc))
            else:
                tmp = self.new_temp(p.name, pt, e.loc)
                inner.declare(p.name, AliasEntity(p.name, tmp, p.direction), p.loc)
                if p.direction != "out":
                    copy_in.append(ir.Assign(tmp, v, e.loc))
                else:
                    copy_in.extend(_header_resets(tmp, pt, e.loc))
                if writable:
                    copy_out.append(ir.Assign(v, tmp, e.loc))
        first_local = len(blk.local_decls)
        for loc_decl in d.locals:
            self.control_local(loc_decl, inner, blk, inst.prefix)
        body = self.stmt(d.body, Scope(inner, "apply", inst.prefix), "control")
        assert isinstance(body, ir.Block)
        # locals with an initialiser are set at each apply (as LocalInitializers does)
        inits = tuple(x for _, x in blk.local_decls[first_local:] if x.init is not None)
        body = ir.Block(inits + body.stmts, body.loc)
        if copy_in:
            body = ir.Block(tuple(self.concretize(x) for x in copy_in) + (body,), body.loc)
        return ir.Call(fn, (), (), e.loc, ir.Void(),
                       ("control_apply", inst.prefix, body,
                        tuple(self.concretize(x) for x in copy_out)))

    def call_builtin(self, e: ir.Call, fn: ir.Member, scope: Scope) -> ir.Expr:
        m = fn.member
        if m in ir.SIZE_METHODS and not e.args and (  # folded: a constant of the type
                size := ir.size_method(fn.expr.type, m)) is not None:  # type: ignore[arg-type]
            return ir.Lit(size, e.loc, ir.InfInt())
        if m == "isValid":
            if e.args:
                raise CompileError(e.loc, "isValid takes no arguments")
            return ir.Call(fn, (), (), e.loc, ir.Bool(), ("builtin", m))
        if m in ("setValid", "setInvalid"):
            if e.args:
                raise CompileError(e.loc, f"{m} takes no arguments")
            self.check_lvalue(fn.expr, e.loc)
            return ir.Call(fn, (), (), e.loc, ir.Void(), ("builtin", m))
        if m in ("push_front", "pop_front"):
            if len(e.args) != 1:
                raise CompileError(e.loc, f"{m} expects 1 argument, got {len(e.args)}")
            assert e.args[0].value is not None
            n = self.expr(e.args[0].value, scope)
            if not isinstance(n, ir.Lit):
                raise CompileError(e.loc, f"{m}: the count must be a constant")
            return ir.Call(fn, (ir.Arg(n, "count", e.loc),), (), e.loc, ir.Void(), ("builtin", m))
        raise CompileError(e.loc, f"{m}: unknown method, or wrong arguments")

    def call_method(self, e: ir.Call, fn: ir.Member, scope: Scope) -> ir.Expr:
        inst_t = ir.unwrap(fn.expr.type)  # type: ignore[arg-type]
        assert isinstance(inst_t, ir.ExternT)
        ext = self.globals.lookup(inst_t.name).decl
        protos = [p for p in ext.methods if p.name == fn.member and p.ret is not None]
        fitting = [p for p in protos if len(p.params) == len(e.args)] or [
            p for p in protos if _required(p.params) <= len(e.args) < len(p.params)]
        if fitting and len(e.args) < len(fitting[0].params):
            # `@optional` parameters left out (P4_16 14.1): passed as `_`
            e = dataclasses.replace(e, args=e.args + tuple(
                ir.Arg(None, None, e.loc) for _ in fitting[0].params[len(e.args):]))
        if not fitting:
            counts = " or ".join(sorted({str(len(p.params)) for p in protos}))
            raise CompileError(e.loc, f"{inst_t.name}.{fn.member}: expects {counts} arguments, "
                               f"got {len(e.args)}")
        proto = fitting[0]
        bindings = dict(inst_t.bindings())
        for tp, ta in zip(proto.type_params, e.type_args, strict=False):
            bindings[tp] = self.resolve_type(ta, scope)
        tparams = tuple(ext.type_params) + tuple(proto.type_params)
        args = self._args(e, proto.params, scope, bindings, f"{inst_t.name}.{fn.member}",
                          tparams)
        assert proto.ret is not None
        ret = self.resolve_type(proto.ret, self._bound(bindings, tparams))
        return ir.Call(fn, args, e.type_args, e.loc, ret, ("method", inst_t.name, fn.member,
                                                            proto))


def _apply_args(e: ir.Call, d: ir.ControlDecl) -> tuple[ir.Arg, ...]:
    """The arguments of `control.apply(...)` in parameter order, with the default values
    (P4_16 6.8.2) of the parameters the call leaves out."""
    args = with_defaults(e.args, d.params)
    if any(a.name for a in args):
        by_name = {a.name: a for a in args}
        missing = [p.name for p in d.params if p.name not in by_name]
        if missing:
            raise CompileError(e.loc, f"{d.name}.apply: missing argument {missing[0]}")
        args = tuple(by_name[p.name] for p in d.params)
    if len(args) != len(d.params):
        raise CompileError(e.loc, f"{d.name}.apply: expects {len(d.params)} arguments, "
                           f"got {len(args)}")
    return args


def _required(params: tuple[ir.Param, ...]) -> int:
    """How many leading parameters a call must give: up to the last one that is neither
    `@optional` nor has a default value."""
    n = 0
    for i, p in enumerate(params):
        if p.default is None and ir.annotation(p.annotations, "optional") is None:
            n = i + 1
    return n


def _header_resets(v: ir.Expr, t: Any, loc: Location) -> list[ir.Stmt]:
    """`setInvalid()` of every header within `v` of type `t` (struct and union fields,
    stack elements), as p4c's DoResetHeaders::generateResets."""
    t = ir.unwrap(t)
    if isinstance(t, ir.Stack):
        return [r for i in range(t.size) for r in _header_resets(
            ir.Index(v, ir.Lit(i, loc, ir.Bits(32)), loc, t.elem), t.elem, loc)]
    if not isinstance(t, ir.StructLike):
        return []
    if t.kind == "header":
        return [ir.CallStmt(ir.Call(
            ir.Member(v, "setInvalid", loc, ir.CallableT("builtin", "setInvalid")),
            (), (), loc, ir.Void(), ("builtin", "setInvalid")), loc)]
    return [r for f in t.fields
            for r in _header_resets(ir.Member(v, f.name, loc, f.type), f.type, loc)]
