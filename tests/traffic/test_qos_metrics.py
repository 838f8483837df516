"""Figures of partitions and QoS runs, from hand-made logs and captures."""

from traffic.frames import DATA_CODEC, ETHERTYPE_FABRIC, Kind
from traffic.nic_config import RECV_LOG_HEADER
from traffic.pcap import write_pcap
from traffic.qos_metrics import class_bandwidth, class_share, cross_partition, pkey_drops
from traffic.sender import write_log_rows

CLASSES = {"1": {"class": "gradient", "src": "h1", "dst": "h2"},
           "2": {"class": "checkpoint", "src": "h1", "dst": "h4"},
           "3": {"class": "checkpoint", "src": "h3", "dst": "h4"}}


def data(slid: int, dlid: int, flow: int) -> bytes:
    values = {name: 0 for name in DATA_CODEC.fields}
    values.update(ether_type=ETHERTYPE_FABRIC, kind=Kind.DATA, slid=slid, dlid=dlid,
                  flow_id=flow, pkey=0xFFFF)
    return DATA_CODEC.pack(**values) + bytes(16)


def test_class_share_counts_the_senders_transmissions_in_the_window(tmp_path):
    write_log_rows(tmp_path / "h1.sent.csv",
                   [(1, i, 1000 + i) for i in range(6)] + [(2, i, 1000 + i) for i in range(2)]
                   + [(2, 9, 5000)])  # after the window
    write_log_rows(tmp_path / "h3.sent.csv", [(3, i, 1000 + i) for i in range(10)])
    logs = sorted(tmp_path.glob("*.sent.csv"))
    assert class_share(logs, CLASSES, ["h1"], 0, 2000) == {"checkpoint": 0.25, "gradient": 0.75}
    assert class_share(logs, CLASSES, ["h9"], 0, 2000) == {}


def test_class_bandwidth_bins_delivered_frames_per_class(tmp_path):
    log = tmp_path / "h4.recv.csv"
    rows = [(2, i, 0, int(i * 10e6), 1, 0, 0, 0, 1) for i in range(20)]  # 100/s for 200 ms
    rows.append((2, 99, 0, int(5e6), 1, 0, 0, 0, 0))  # dropped by the buffer: not delivered
    log.write_text(RECV_LOG_HEADER + "".join(",".join(map(str, r)) + "\n" for r in rows))
    bw = class_bandwidth([log], CLASSES, 0, int(200e6), 100.0, {"checkpoint": 1000})
    assert bw["pps"] == {"checkpoint": [100.0, 100.0]}
    assert bw["bytes_per_s"] == {"checkpoint": [100000, 100000]}


def test_cross_partition_counts_captured_frames_from_outside_the_partitions(tmp_path):
    write_pcap(tmp_path / "h3.pcap", [(1, data(1, 3, 7)), (2, data(4, 3, 8)),
                                      (3, b"\xff" * 60)])  # not fabric: ignored
    write_pcap(tmp_path / "h4.pcap", [(1, data(3, 4, 9))])
    hosts = {1: "h1", 3: "h3", 4: "h4"}
    jobs = {"h1": "A", "h3": "B", "h4": "B"}
    out = cross_partition({"h3": tmp_path / "h3.pcap", "h4": tmp_path / "h4.pcap",
                           "h9": tmp_path / "missing.pcap"}, hosts,
                          lambda a, b: jobs[a] == jobs[b])
    assert out == {"delivered": 1, "by_host": {"h3": 1}, "frames_seen": 3}


def test_pkey_drops_sum_the_pkey_reason_over_switches():
    drops = {"s1": {(1, "pkey"): (3, 300), (1, "tail"): (5, 500)},
             "s2": {(3, "pkey"): (2, 200), (4, "pkey"): (0, 0)}}
    assert pkey_drops(drops) == {"total": 5, "by_port": {"s1:1": 3, "s2:3": 2}}
