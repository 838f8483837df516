/* fabriclab wire formats: the single P4 declaration of every frame the fabric
 * carries. traffic/frames.py declares the same layers for Scapy; the test
 * tests/test_wire_formats.py checks that both agree field by field. */
#ifndef FABRICLAB_HEADERS_P4
#define FABRICLAB_HEADERS_P4

typedef bit<9>  port_t;
typedef bit<16> lid_t;

const bit<16> ETHERTYPE_FABRIC      = 0x88B5;  /* IEEE local experimental */
const bit<16> ETHERTYPE_MAC_CONTROL = 0x8808;  /* 802.1Qbb PFC */
const bit<16> PFC_OPCODE            = 0x0101;

/* LRH kinds */
const bit<8> KIND_DATA   = 1;
const bit<8> KIND_CREDIT = 2;
const bit<8> KIND_PROBE  = 3;
const bit<8> KIND_HELLO  = 4;

/* bmv2's conventional CPU port for packet-in/out (--cpu-port 510). */
const port_t CPU_PORT = 510;

/* Drop reasons: the index within a port's block of the drop counter. */
const bit<32> DROP_REASONS          = 8;
const bit<32> DROP_NO_ROUTE         = 0;
const bit<32> DROP_NOT_FABRIC       = 1;
const bit<32> DROP_TAIL             = 2;
const bit<32> DROP_HEADROOM         = 3;
const bit<32> DROP_HOQ_LIFETIME     = 4;
const bit<32> DROP_WATCHDOG         = 5;
const bit<32> NUM_PORTS             = 512;

header ethernet_t {
    bit<48> dst_addr;
    bit<48> src_addr;
    bit<16> ether_type;
}

/* Local routing header, modelled on InfiniBand's LRH. */
header lrh_t {
    bit<4>  vl;       /* virtual lane the frame travels on */
    bit<4>  sl;       /* service level, mapped to VL / PFC priority by the SM */
    bit<8>  kind;     /* KIND_* */
    lid_t   dlid;     /* destination local identifier */
    lid_t   slid;     /* source local identifier */
    bit<16> pkt_len;  /* bytes after the LRH */
}

/* Base transport header, after InfiniBand's BTH. */
header bth_t {
    bit<8>  opcode;
    bit<24> dest_qp;
    bit<32> psn;      /* packet sequence number, per flow */
}

/* Application header: which collective step this chunk belongs to. */
header app_t {
    bit<32> flow_id;
    bit<16> coll_id;
    bit<16> step;
    bit<32> chunk;
    bit<64> send_ts;  /* sender's clock, ns */
}

/* InfiniBand flow-control packet: absolute counters modulo 4096. */
header credit_t {
    bit<4>  op;
    bit<12> fctbs;    /* flow control total blocks sent (by the transmitter) */
    bit<4>  vl;
    bit<12> fccl;     /* flow control credit limit (advertised by the receiver) */
}

/* SM discovery: sent as packet-out of one switch port, punted by the neighbour. */
header probe_t {
    bit<64> origin_guid;
    bit<16> origin_port;
    bit<16> seq;
}

/* A host announces itself to its switch. */
header hello_t {
    bit<64> guid;
}

/* IEEE 802.1Qbb priority flow control (MAC control frame). */
header pfc_t {
    bit<16> opcode;
    bit<16> class_enable;
    bit<16> quanta0;
    bit<16> quanta1;
    bit<16> quanta2;
    bit<16> quanta3;
    bit<16> quanta4;
    bit<16> quanta5;
    bit<16> quanta6;
    bit<16> quanta7;
}

@controller_header("packet_in")
header packet_in_t {
    bit<16> ingress_port;
    bit<16> reason;
}

@controller_header("packet_out")
header packet_out_t {
    bit<16> egress_port;
    bit<16> flags;
}

struct headers_t {
    packet_out_t packet_out;
    packet_in_t  packet_in;
    ethernet_t   ethernet;
    pfc_t        pfc;
    lrh_t        lrh;
    bth_t        bth;
    app_t        app;
    credit_t     credit;
    probe_t      probe;
    hello_t      hello;
}

struct metadata_t {
    bit<32> drop_reason;
}

#endif
