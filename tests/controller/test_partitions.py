"""partitions.conf (OpenSM's syntax, a subset) and InfiniBand's membership rule."""

import pytest

from controller.partitions import PartitionsError, load_partitions, parse_partitions

HOSTS = ("h1", "h2", "h3", "h4", "storage1")

TWO_JOBS = """\
# two training jobs and a shared storage host
jobA=0x0001 : h1=full, h2=full,
              storage1=limited ;
jobB=0x0002, defmember=full : h3, h4,   # continued
   storage1=limited;
Default=0x7fff, ipoib : ALL ;   # every port, limited
"""


def test_two_jobs_are_isolated_and_a_limited_storage_host_reaches_both():
    parts = parse_partitions(TWO_JOBS, HOSTS)
    assert [(p.name, p.pkey, p.line) for p in parts.partitions] == [
        ("jobA", 1, 2), ("jobB", 2, 4), ("Default", 0x7FFF, 6)]
    assert parts.pkey_for("h1", "h2") == 0x8001  # full member: bit 15 set
    assert parts.pkey_for("h3", "storage1") == 0x8002
    assert parts.pkey_for("storage1", "h4") == 0x0002  # storage is limited in jobB
    assert parts.pkey_for("h1", "h3") is None  # only Default in common, both limited there
    assert parts.pkey_for("storage1", "storage1") is None  # limited-limited: never
    assert parts.port_table("storage1") == {1: False, 2: False, 0x7FFF: False}


def test_all_and_full_membership_make_everyone_reachable():
    parts = parse_partitions("Default=0x7fff : ALL=full ;", HOSTS)
    assert parts.pkey_for("h1", "storage1") == 0xFFFF


@pytest.mark.parametrize("text, message", [
    ("jobA=0x0001 : h1=full\n", r"p.conf:1: statement not ended with ';'"),
    ("\n\njobA 0x0001 : h1 ;", r"p.conf:3: expected 'Name=PKey'"),
    ("jobA=0x0001 h1 ;", r"p.conf:1: expected 'Name=PKey\[, flags\] : members ;'"),
    ("jobA=0x8000 : h1 ;", r"p.conf:1: P_Key 0x8000 is not 0x0001-0x7fff"),
    ("jobA=0 : h1 ;", r"p.conf:1: P_Key 0 is not 0x0001-0x7fff"),
    ("jobA=zz : h1 ;", r"p.conf:1: P_Key 'zz' is not a number"),
    ("jobA=1 : h1 ;\n# c\njobA=2 : h2 ;", r"p.conf:3: partition 'jobA' given twice \(first on line 1\)"),
    ("jobA=1 : h1 ;\njobB=1 : h2 ;", r"p.conf:2: P_Key 0x0001 of 'jobB' is already used by 'jobA' \(line 1\)"),
    ("jobA=1 : h9 ;", r"p.conf:1: 'h9' is not a host of the fabric"),
    ("jobA=1 : h1=both ;", r"p.conf:1: membership of 'h1' must be full or limited"),
    ("jobA=1, mtu=4 : h1 ;", r"p.conf:1: unknown flag 'mtu=4'"),
    ("jobA=1 : h1, h1=full ;", r"p.conf:1: 'h1' listed twice"),
    ("jobA=1 : ;", r"p.conf:1: partition 'jobA' has no members"),
    ("jobA=1 : h1 ;\n ; ", r"p.conf:2: empty statement"),
])
def test_bad_statements_are_refused_with_their_line_number(text, message):
    with pytest.raises(PartitionsError, match=message):
        parse_partitions(text, HOSTS, "p.conf")


def test_missing_file_is_one_clear_error(tmp_path):
    with pytest.raises(PartitionsError, match="No such file"):
        load_partitions(tmp_path / "partitions.conf", HOSTS)
