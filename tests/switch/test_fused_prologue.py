"""The fused function's prologue loads from the template only the slots that may be
read before they are assigned (p4switch/codegen_assigned.py)."""

from p4switch.codegen_assigned import slots_to_load


def test_a_slot_assigned_before_every_read_is_not_loaded():
    src = "def fused(pkt):\n    S_1 = pkt\n    S_2 = S_1 + 1\n    return S_2\n"
    assert slots_to_load(src) == set()


def test_a_slot_assigned_on_one_branch_only_is_loaded():
    src = ("def fused(pkt):\n    if pkt:\n        S_3 = 1\n    else:\n        S_4 = 2\n"
           "    return S_3\n")
    assert slots_to_load(src) == {3}


def test_a_break_out_of_the_once_loop_skips_the_assignments_after_it():
    src = ("def fused(pkt):\n    for _ in _ONCE:\n        if pkt:\n            break\n"
           "        S_5 = 1\n    return S_5\n")
    assert slots_to_load(src) == {5}


def test_a_branch_that_returns_does_not_weaken_what_follows():
    src = ("def fused(pkt):\n    if pkt:\n        return None\n    else:\n        S_6 = 1\n"
           "    return S_6\n")
    assert slots_to_load(src) == set()


def test_an_augmented_assignment_reads_its_target():
    src = "def fused(pkt):\n    S_7 += pkt\n    return S_7\n"
    assert slots_to_load(src) == {7}


def test_a_loop_body_may_not_run():
    src = ("def fused(pkt):\n    for b in pkt:\n        S_8 = b\n    return S_8\n")
    assert slots_to_load(src) == {8}


def test_code_beyond_the_analysis_loads_every_slot_it_reads():
    src = ("def fused(pkt):\n    S_9 = 1\n    with E:\n        S_10 = 2\n"
           "    return S_9 + S_10\n")
    assert slots_to_load(src) == {9, 10}


def test_an_exception_handler_may_run_before_the_try_body_assigned_anything():
    src = ("def fused(pkt):\n    S_9 = 1\n    try:\n        S_10 = 2\n    except E:\n"
           "        pass\n    return S_9 + S_10\n")
    assert slots_to_load(src) == {10}
    src = ("def fused(pkt):\n    S_9 = 1\n    try:\n        S_10 = 2\n    except E:\n"
           "        S_10 = 3\n    return S_9 + S_10\n")
    assert slots_to_load(src) == set()


def test_a_header_field_read_under_its_valid_bit_is_not_loaded():
    # The parser sets the valid slot (template value 0) with the fields; the
    # deparser reads the fields only where the header is valid.
    src = ("def fused(pkt):\n    for _ in _ONCE:\n        if pkt:\n            break\n"
           "        S_1 = 1\n        S_2 = pkt[0]\n    if S_1:\n        return S_2\n"
           "    if not S_1:\n        S_2 = 0\n    return S_2\n")
    assert slots_to_load(src, false_initially={1}) == {1}
    assert slots_to_load(src, false_initially=set()) == {1, 2}


def test_a_valid_slot_written_with_a_computed_value_implies_nothing():
    src = ("def fused(pkt):\n    if pkt:\n        S_1 = 1\n        S_2 = 5\n"
           "    S_1 = pkt[1]\n    if S_1:\n        return S_2\n")
    assert slots_to_load(src, false_initially={1}) == {2}
