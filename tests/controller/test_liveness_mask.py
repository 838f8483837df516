"""port_liveness's mask <-> a set of down ports."""

from controller.liveness import mask_of, ports_of


def test_mask_round_trips_every_port_including_the_highest():
    for down in (set(), {1}, {2, 3}, {0, 63, 64, 509, 511}):
        assert ports_of(mask_of(down)) == down
    assert mask_of({3}) == 0b1000
