/* fabriclab wire formats: the single P4 declaration of every frame the fabric
 * carries. traffic/frames.py declares the same layers for Scapy; the test
 * tests/test_wire_formats.py checks that both agree field by field. */
#ifndef FABRICLAB_HEADERS_P4
#define FABRICLAB_HEADERS_P4

typedef bit<9>  port_t;
typedef bit<16> lid_t;
/* One bit per port (NUM_PORTS): port_liveness's mask, bit p = port p down. */
typedef bit<512> port_mask_t;

const bit<16> ETHERTYPE_FABRIC      = 0x88B5;  /* IEEE local experimental */
const bit<16> ETHERTYPE_MAC_CONTROL = 0x8808;  /* 802.1Qbb PFC */
const bit<16> PFC_OPCODE            = 0x0101;

/* LRH kinds */
const bit<8> KIND_DATA   = 1;
const bit<8> KIND_CREDIT = 2;
const bit<8> KIND_PROBE  = 3;
const bit<8> KIND_HELLO  = 4;
const bit<8> KIND_SA     = 5;  /* subnet administration: punted / packet-out only */
const bit<8> KIND_NOTIFY = 6;  /* fault notification: "DLID unreachable through me" (notify.p4) */

/* The constants the control plane must agree on. A serializable enum, so that the
 * compiled program carries them (bmv2 JSON "enums", P4Info type_info): the runner
 * starts switches with this CPU port and the SM creates this program's clone sessions
 * and multicast group (controller/program_constants.py). Change a value here only. */
enum bit<32> FabricConst {
    CPU_PORT        = 510,   /* bmv2's conventional CPU port (--cpu-port) for packet-in/out */
    NUM_CLASSES     = 8,     /* traffic classes: an SL maps to one of 8 VLs / PFC priorities */
    FC_SESSION_BASE = 100,   /* clone session FC_SESSION_BASE + p sends out of port p */
    NOTIFY_GROUP    = 1000,  /* multicast group of a switch's switch-to-switch ports */
    /* The hold loop (hold_loop.p4): a held frame leaves by HOLD_OUT_PORT (clone
     * session HOLD_SESSION) and comes back in by HOLD_IN_PORT; never fabric ports. */
    HOLD_OUT_PORT   = 508,
    HOLD_IN_PORT    = 509,
    HOLD_SESSION    = 99
}

const port_t CPU_PORT = (port_t)(bit<32>)FabricConst.CPU_PORT;

/* Drop reasons: the index within a port's block of the drop counter. A serializable
 * enum, so that the compiled program names them (bmv2 JSON "enums"): the SM decodes
 * the counter with the names of the program it pushed (controller/drop_reasons.py). */
enum bit<32> DropReason {
    NO_ROUTE     = 0,
    NOT_FABRIC   = 1,
    TAIL         = 2,
    HEADROOM     = 3,
    HOQ_LIFETIME = 4,
    WATCHDOG     = 5,
    LINK_DOWN    = 6,  /* held for a port whose link went down */
    PKEY         = 7   /* partition violation at a host-facing port */
}
const bit<32> DROP_REASONS          = 8;  /* cells per port (the P4Info counter size says it too) */
const bit<32> DROP_NO_ROUTE         = (bit<32>)DropReason.NO_ROUTE;
const bit<32> DROP_NOT_FABRIC       = (bit<32>)DropReason.NOT_FABRIC;
const bit<32> DROP_TAIL             = (bit<32>)DropReason.TAIL;
const bit<32> DROP_HEADROOM         = (bit<32>)DropReason.HEADROOM;
const bit<32> DROP_HOQ_LIFETIME     = (bit<32>)DropReason.HOQ_LIFETIME;
const bit<32> DROP_WATCHDOG         = (bit<32>)DropReason.WATCHDOG;
const bit<32> DROP_LINK_DOWN        = (bit<32>)DropReason.LINK_DOWN;
const bit<32> DROP_PKEY             = (bit<32>)DropReason.PKEY;
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
    bit<16> pkey;     /* partition key: bits 14-0 the partition, bit 15 = full member */
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

/* Subnet administration (SA), after InfiniBand's SA MAD header: a host's
 * PathRecord query, punted to the SM by kind; the SM's answer and its notices
 * after a global reroute, sent as packet-out of the host's port. `count`
 * path_record_t follow. The switch never parses past the LRH of an SA frame
 * (nothing in it decides forwarding); both are declared here so that the one
 * declaration of the wire formats stays complete (traffic/frames.py). */
header sa_t {
    bit<8>  method;     /* GET 0x01, GET_RESP 0x81, REPORT 0x06, REPORT_RESP 0x86 */
    bit<8>  status;     /* 0 ok, 1 no such destination, 2 no path, 3 bad request */
    bit<16> attribute;  /* 0x0035 PathRecord */
    bit<64> tid;        /* transaction id: an answer carries its query's */
    bit<16> count;      /* path records that follow */
}

/* One path, after InfiniBand's PathRecord (port GUIDs stand in for GIDs). */
header path_record_t {
    bit<64>  sguid;     /* source port GUID */
    bit<64>  dguid;     /* destination port GUID */
    lid_t    slid;
    lid_t    dlid;
    bit<4>   sl;        /* service level to send with (sl_to_vl maps it to the VL) */
    bit<4>   mtu;       /* IB MTU code (1 = 256 .. 5 = 4096); 0 = not given */
    bit<8>   rate;      /* IB static rate code; 0 = not given */
    bit<48>  dmac;      /* destination MAC; 0 = not known */
    bit<128> dname;     /* destination host name, ASCII, NUL-padded */
}

/* ---- fault notification (notify.p4, docs/fabric.md "Fault notification") */
/* Link-local, switch to switch: the sender has no live port left for the
 * frame's LRH DLID; the receiver stops using the port it came in on for that
 * DLID. `epoch` is the sender's route epoch (notify_config): a notification
 * from before the SM's last global reroute is ignored. */
header notify_t {
    bit<8>  op;       /* NOTIFY_OP_UNREACHABLE */
    bit<8>  reserved;
    bit<16> epoch;
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

/* A held frame on its way round the hold loop (hold_loop.p4): FL_HOLD's fields,
 * in front of the frame's Ethernet header. Never on a fabric link. */
header hold_t {
    bit<16> magic;        /* HOLD_MAGIC */
    bit<1>  is_data;
    bit<1>  held;
    bit<1>  has_ticket;
    bit<32> ticket;
    bit<48> arrival_ts;
    bit<32> verdict;
    bit<9>  in_port;
    bit<3>  in_cls;
    bit<9>  out_port;
    bit<3>  cls;
    bit<5>  pad;
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
    notify_t     notify;
    hold_t       hold;
}

/* Flow-control modes, chosen at run time by the SM (FabricIngress.fc_config). */
const bit<8> FC_LOSSY  = 0;
const bit<8> FC_PFC    = 1;
const bit<8> FC_CREDIT = 2;

/* Traffic classes: an SL maps to one of 8 VLs (credit mode) / PFC priorities. */
const bit<32> NUM_CLASSES = (bit<32>)FabricConst.NUM_CLASSES;

/* Flow-control frames a clone turns into (metadata_t.fc_op). */
const bit<8> FC_OP_NONE       = 0;
const bit<8> FC_OP_PAUSE      = 1;  /* 802.1Qbb pause, PFC_PAUSE_QUANTA */
const bit<8> FC_OP_RESUME     = 2;  /* 802.1Qbb pause with quanta 0 */
const bit<8> FC_OP_CREDIT     = 3;  /* CREDIT frame carrying our FCCL */
const bit<8> FC_OP_CREDIT_REQ = 4;  /* CREDIT frame op 1: "tell me your FCCL" */

/* credit_t.op values (InfiniBand: 0 normal, 1 flow-control init). */
const bit<4> CREDIT_OP_NORMAL  = 0;
const bit<4> CREDIT_OP_REQUEST = 1;

const bit<48> PFC_DST_MAC        = 0x0180C2000001;
const bit<48> CREDIT_DST_MAC     = 0xFFFFFFFFFFFF;
const bit<48> SWITCH_MAC_PREFIX  = 0x020000FF0000;  /* | port: 02:00:00:ff:0p:pp, locally
                                                       administered, never a host's MAC */
const bit<16> PFC_PAUSE_QUANTA   = 0xFFFF;
const bit<32> FC_FRAME_BYTES     = 60;   /* flow-control frames are cut to this size */

/* Clone session the SM creates for every port p: FC_SESSION_BASE + p -> port p. */
const bit<32> FC_SESSION_BASE = (bit<32>)FabricConst.FC_SESSION_BASE;

/* Field lists preserved across recirculation (a held packet) and into clones.
 * metadata_t's @field_list annotations use the numbers themselves: p4c wants
 * literals there. */
const bit<8> FL_HOLD = 1;
const bit<8> FL_FC   = 2;

/* bmv2 standard_metadata.instance_type of clones. */
const bit<32> INSTANCE_INGRESS_CLONE = 1;
const bit<32> INSTANCE_EGRESS_CLONE  = 2;

/* A blocked transmitter asks its neighbour again for credits this often. */
const bit<64> CREDIT_REQUEST_INTERVAL_NS = 10000000;
/* A queue head not seen for this long was lost; its ticket is skipped. Far
 * longer than a held frame's round trip (recirculation + a full egress queue
 * at an emulated link rate) while the switch runs; a switch stalled longer (a
 * descheduled process on a loaded machine) sees such a gap with its head alive,
 * hence HEAD_LOST_ROUNDS, and a live frame whose ticket was skipped queues again. */
const bit<64> HEAD_LOST_NS = 1000000000;
/* ... and only after the other ticket holders of its queue came by this many
 * times each (a live head comes by once per round of the held frames). */
const bit<32> HEAD_LOST_ROUNDS = 8;

/* fc_config as the SM set it: loaded on every ingress pass, it reaches egress
 * with the packet (a clone keeps only fc_credit_limit). */
struct fc_config_t {
    bit<8>  mode;                 /* FC_LOSSY / FC_PFC / FC_CREDIT */
    bit<32> xoff;                 /* PFC: pause the upstream at this many packets */
    bit<32> xon;                  /* PFC: resume it at or below this many */
    bit<32> headroom;             /* PFC: packets accepted above xoff, then dropped */
    bit<32> credit_limit;         /* CREDIT: receive buffer per (port, VL), in blocks */
    bit<32> credit_coalesce;      /* CREDIT: return credits every this many blocks */
    bit<32> hoq_lifetime_us;      /* held packet discarded after this long; 0 = never */
    bit<32> watchdog_detect_us;   /* PFC watchdog: paused this long -> storm; 0 = off */
    bit<32> watchdog_restore_us;  /* PFC watchdog: ignore pauses (drop) this long */
}

struct metadata_t {
    bit<32> drop_reason;
    /* dlid_route result, before port_liveness picks the port. */
    port_t  route_primary;
    port_t  route_backup;
    bit<1>  route_has_backup;
    bit<1>  routed;
    bit<64> pause_quantum_ns;     /* 512 bit times at the ingress port's rate */
    bit<32> egress_limit;         /* LOSSY: egress_config's limit for egress_spec */
    /* port_liveness: bit p = port p is down. Loaded on every ingress pass;
     * reaches egress with the packet. */
    port_mask_t ports_down;
    /* A data frame under flow control; what a held (recirculating) packet keeps
     * (field list 1 = FL_HOLD). */
    @field_list(1) bit<1>  is_data;
    @field_list(1) bit<1>  held;
    @field_list(1) bit<1>  has_ticket;
    @field_list(1) bit<32> ticket;
    @field_list(1) bit<48> arrival_ts;   /* ingress_global_timestamp, first pass */
    @field_list(1) bit<32> verdict;      /* held packet to discard: DROP_* + 1 */
    @field_list(1) port_t  in_port;      /* where it entered the switch */
    @field_list(1) bit<3>  in_cls;       /* class it arrived in (LRH VL on the wire) */
    @field_list(1) port_t  out_port;
    @field_list(1) bit<3>  cls;          /* class it leaves in (sl_to_vl) */
    /* Flow-control frame to build from a clone (field list 2 = FL_FC). */
    @field_list(2) bit<8>  fc_op;
    @field_list(2) bit<3>  fc_cls;
    @field_list(2) bit<32> fc_credit_limit;  /* cfg.credit_limit, for the FCCL */
    /* notify_config: ports where NOTIFY frames are sent and taken (0 = off), epoch. */
    port_mask_t notify_ports;
    bit<16> notify_epoch;
    bit<3>  notify_priority;  /* the egress queue NOTIFY frames take */
    /* A held frame's egress port was notified dead for its DLID (this pass). */
    bit<1> notified_dead;
    /* Set by fc_config on every ingress pass; reaches egress with the packet. */
    fc_config_t cfg;
    /* --- QoS (partitions and VL arbitration) --- */
    bit<1>  class_queues;  /* tx_queues: data frames queue by class (priority = VL) */
    port_mask_t pkey_ports;  /* pkey_enforce: bit p = port p faces a host, P_Keys checked */
    bit<15> pkey_base;       /* hdr.bth.pkey without the membership bit */
    bit<1>  pkey_hit;        /* pkey_in / pkey_out: the port is a member of the partition */
    bit<1>  pkey_full;       /* ... as a full member */
    /* --- the hold loop (hold_loop.p4) --- */
    bit<1>  hold_loop;       /* hold_loop_config: held frames go round the hold loop */
    bit<1>  egress_cloned;   /* egress made an E2E clone on this pass (one per pass) */
}

#endif
