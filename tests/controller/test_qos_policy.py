"""The SM's QoS policy file: OpenSM's QoS options (a subset) and traffic classes."""

import pytest

from controller.qos_policy import QosPolicyError, load_qos_policy, parse_qos_policy
from traffic.vl_arbitration import VlArbitration

GRADIENT_FAVOURED = """\
# checkpoint-vs-allreduce: gradient sync on VL0, checkpoint writes on VL1
qos_max_vls 2
qos_high_limit 0
qos_vlarb_low 0:224,1:32
qos_class gradient 0
qos_class checkpoint 1   # bulk I/O
"""


def test_gradient_favoured_policy_gives_both_port_kinds_the_same_tables():
    policy = parse_qos_policy(GRADIENT_FAVOURED)
    expected = VlArbitration(low=((0, 224), (1, 32)))
    assert policy.ca.arbitration == expected and policy.swe.arbitration == expected
    assert policy.sl_of_class("checkpoint") == 1 and policy.sl_of_class("gradient") == 0
    assert policy.ca.sl2vl[:4] == (0, 1, 0, 0)  # SLs beyond the VLs in use go to VL0
    assert policy.as_dict()["swe"]["low"] == [[0, 224], [1, 32]]


def test_ca_and_swe_prefixes_override_the_plain_option_per_port_kind():
    policy = parse_qos_policy("qos_max_vls 4\nqos_vlarb_low 0:1,1:1\n"
                              "qos_swe_vlarb_low 0:8,1:1\nqos_ca_vlarb_high 3:16\n"
                              "qos_ca_high_limit 6\nqos_sl2vl 0,1,3\n")
    assert policy.ca.arbitration == VlArbitration(high=((3, 16),), low=((0, 1), (1, 1)),
                                                  high_limit=6)
    assert policy.swe.arbitration == VlArbitration(low=((0, 8), (1, 1)))
    assert policy.swe.sl2vl[:4] == (0, 1, 3, 3)


def test_no_tables_means_equal_weights_over_the_vls_in_use():
    policy = parse_qos_policy("qos_max_vls 3\n")
    assert policy.ca.arbitration == VlArbitration.equal(range(3))


def test_unknown_class_names_the_known_ones():
    with pytest.raises(QosPolicyError, match="'storage'.*checkpoint, gradient"):
        parse_qos_policy(GRADIENT_FAVOURED).sl_of_class("storage")


@pytest.mark.parametrize("text, message", [
    ("qos_max_vls 2\nqos_vlarb_lo 0:1\n", r"x.conf:2: unknown option 'qos_vlarb_lo'"),
    ("qos_vlarb_low 0:300\n", r"x.conf:1: weight 300 is not 0-255"),
    ("qos_vlarb_low 0-4\n", r"x.conf:1: '0-4' is not VL:weight"),
    ("qos_max_vls 2\n\nqos_vlarb_low 0:4,3:4\n", r"x.conf:3: VL 3 is beyond qos_max_vls 2"),
    ("qos_high_limit 6\n# x\nqos_high_limit 7\n", r"x.conf:3: qos_high_limit given twice "
                                                  r"\(first on line 1\)"),
    ("qos_high_limit\n", r"x.conf:1: qos_high_limit needs a value"),
    ("qos_class gradient\n", r"x.conf:1: expected 'qos_class NAME SL'"),
    ("qos_class gradient 16\n", r"x.conf:1: SL 16 is not 0-15"),
    ("qos_class a 1\nqos_class a 2\n", r"x.conf:2: traffic class 'a' given twice"),
    ("qos_max_vls 2\nqos_sl2vl 0,1,2\n", r"x.conf:2: SL 2 maps to VL 2, beyond qos_max_vls 2"),
    ("qos_vlarb_low 0:0,1:0\n", r"x.conf:1: every entry has weight 0"),
    ("qos_max_vls nine\n", r"x.conf:1: qos_max_vls 'nine' is not a number"),
])
def test_bad_lines_are_refused_with_their_line_number(text, message):
    with pytest.raises(QosPolicyError, match=message):
        parse_qos_policy(text, "x.conf")


def test_missing_file_is_one_clear_error(tmp_path):
    with pytest.raises(QosPolicyError, match="No such file"):
        load_qos_policy(tmp_path / "nope.conf")
