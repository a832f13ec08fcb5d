/*
 * leafspine.cc - aisim's reference network scenario (net/leafspine-websearch)
 * rebuilt in ns-3 3.37, replaying the flows of an aisim run (flows.csv).
 *
 * Topology: L leaves x H hosts, S spines; host links 10 Gbps / 1 us, fabric
 * links 40 Gbps / 1 us.  Every egress port (hosts' NICs included) runs
 * StepEcnQueueDisc: aisim's port in ns-3 - drop-tail against the port's
 * buffer and the DCTCP step (an ECN-capable packet is CE-marked when the
 * queue it joins already holds more than K bytes), with the bytes counted
 * as aisim counts them (IP bytes waiting, including the packet waiting in
 * the device's 1-packet queue, excluding the one on the wire).
 * Routing: LeafSpineRouting, per-flow ECMP (a symmetric hash of the
 * 5-tuple picks the spine at the leaf, so ACKs retrace the data's path as
 * in aisim), because ns-3.37's global routing only offers per-packet
 * random ECMP; --routing=spray_random picks a spine uniformly at random
 * for every packet at the source leaf instead (aisim's spray_random; ACKs
 * are sprayed too, where aisim sends each ACK back along its data
 * packet's path: the same distribution of paths).
 * Transport: ns3::TcpDctcp (with aisim's 1-MSS floor on the window cut,
 * see TcpDctcpFloor), MSS 1460, no timestamps (40 B headers as aisim),
 * IW 10, SACK, min RTO 1 ms, an ACK per segment, 64 MiB buffers.
 * --cc=newreno: ns3::TcpNewReno without ECN instead (the ports are then
 * pure drop-tail), everything else the same: loss recovery is exercised.
 * Workload: one BulkSendApplication / PacketSink pair per flow of the CSV;
 * a flow with no size is long-lived (MaxBytes 0) and the run then ends at
 * --stop (aisim's `stop`), its delivered bytes in the output.
 *
 * Build: g++ -O2 -std=c++17 leafspine.cc $(pkg-config --cflags --libs
 *        ns3-core ns3-network ns3-internet ns3-point-to-point
 *        ns3-traffic-control ns3-applications)
 * Run:   leafspine --flows=flows.csv --out=ns3-flows.csv [--summary=s.txt]
 *
 * See docs/ns3-comparison.md for the mapping and its known differences.
 */
#include "ns3/applications-module.h"
#include "ns3/core-module.h"
#include "ns3/internet-module.h"
#include "ns3/network-module.h"
#include "ns3/point-to-point-module.h"
#include "ns3/traffic-control-module.h"

#include <chrono>
#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

using namespace ns3;

/* ------------------------------------------------------------------ */
/* aisim's egress port as a queue disc                                 */
/* ------------------------------------------------------------------ */

class StepEcnQueueDisc : public QueueDisc
{
  public:
    static TypeId GetTypeId();
    StepEcnQueueDisc() : QueueDisc(QueueDiscSizePolicy::NO_LIMITS) {}
    void SetDeviceQueue(Ptr<Queue<Packet>> q, uint32_t l2Bytes)
    {
        m_devq = q;
        m_l2 = l2Bytes;
    }
    static uint64_t s_drops, s_marks, s_dataMarks, s_maxOcc, s_ectData;

  private:
    uint64_t Occupancy() const
    {
        uint64_t b = GetInternalQueue(0)->GetNBytes();
        if (m_devq)
            b += m_devq->GetNBytes() - (uint64_t)m_l2 * m_devq->GetNPackets();
        return b;
    }
    bool DoEnqueue(Ptr<QueueDiscItem> item) override
    {
        uint64_t occ = Occupancy();
        uint32_t sz = item->GetSize(); /* IP bytes: header + TCP + payload */
        /* count ECN-capable data segments (none expected with --cc=newreno) */
        Ptr<Ipv4QueueDiscItem> ip = DynamicCast<Ipv4QueueDiscItem>(item);
        if (ip && ip->GetHeader().GetEcn() != Ipv4Header::ECN_NotECT) {
            TcpHeader th;
            Ptr<const Packet> p = item->GetPacket();
            if (p->PeekHeader(th) && p->GetSize() > th.GetSerializedSize())
                s_ectData++;
        }
        if (occ + sz > m_buffer) {
            DropBeforeEnqueue(item, "overflow");
            s_drops++;
            return false;
        }
        if (m_k > 0 && occ > m_k && Mark(item, "step")) {
            s_marks++;
            /* ns-3's DCTCP sends pure ACKs ECN-capable too (aisim does
             * not): count the marks on segments carrying data apart */
            TcpHeader th;
            Ptr<const Packet> p = item->GetPacket();
            if (p->PeekHeader(th) && p->GetSize() > th.GetSerializedSize())
                s_dataMarks++;
        }
        bool ok = GetInternalQueue(0)->Enqueue(item);
        if (occ + sz > s_maxOcc)
            s_maxOcc = occ + sz;
        return ok;
    }
    Ptr<QueueDiscItem> DoDequeue() override { return GetInternalQueue(0)->Dequeue(); }
    bool CheckConfig() override
    {
        if (GetNInternalQueues() == 0)
            AddInternalQueue(CreateObjectWithAttributes<DropTailQueue<QueueDiscItem>>(
                "MaxSize", QueueSizeValue(QueueSize("1000000p"))));
        return true;
    }
    void InitializeParams() override {}

    uint64_t m_k{0};
    uint64_t m_buffer{0};
    uint32_t m_l2{2};
    Ptr<Queue<Packet>> m_devq;
};

uint64_t StepEcnQueueDisc::s_drops = 0;
uint64_t StepEcnQueueDisc::s_marks = 0;
uint64_t StepEcnQueueDisc::s_dataMarks = 0;
uint64_t StepEcnQueueDisc::s_maxOcc = 0;
uint64_t StepEcnQueueDisc::s_ectData = 0;

NS_OBJECT_ENSURE_REGISTERED(StepEcnQueueDisc);

TypeId
StepEcnQueueDisc::GetTypeId()
{
    static TypeId tid =
        TypeId("ns3::StepEcnQueueDisc")
            .SetParent<QueueDisc>()
            .SetGroupName("TrafficControl")
            .AddConstructor<StepEcnQueueDisc>()
            .AddAttribute("K", "mark above this many bytes queued (0: never)", UintegerValue(0),
                          MakeUintegerAccessor(&StepEcnQueueDisc::m_k),
                          MakeUintegerChecker<uint64_t>())
            .AddAttribute("Buffer", "drop-tail limit in bytes", UintegerValue(1 << 20),
                          MakeUintegerAccessor(&StepEcnQueueDisc::m_buffer),
                          MakeUintegerChecker<uint64_t>());
    return tid;
}

/* ------------------------------------------------------------------ */
/* DCTCP with aisim's (and Linux's) floor on the window cut            */
/* ------------------------------------------------------------------ */

/* ns-3.37's TcpDctcp::GetSsThresh returns cwnd (1 - alpha/2) with no
 * floor: after a few marked windows cwnd falls below one segment, the
 * sender cannot send, and the flow waits for a retransmission timeout
 * with nothing lost.  aisim keeps cwnd >= 1 MSS (Linux: >= 2 segments).
 * This subclass adds aisim's floor; --dctcp=stock runs ns-3's own. */
class TcpDctcpFloor : public TcpDctcp
{
  public:
    static TypeId GetTypeId()
    {
        static TypeId tid = TypeId("ns3::TcpDctcpFloor")
                                .SetParent<TcpDctcp>()
                                .SetGroupName("Internet")
                                .AddConstructor<TcpDctcpFloor>();
        return tid;
    }
    TcpDctcpFloor() = default;
    TcpDctcpFloor(const TcpDctcpFloor& o) : TcpDctcp(o) {}
    uint32_t GetSsThresh(Ptr<const TcpSocketState> tcb, uint32_t bytesInFlight) override
    {
        return std::max(TcpDctcp::GetSsThresh(tcb, bytesInFlight), tcb->m_segmentSize);
    }
    Ptr<TcpCongestionOps> Fork() override { return CopyObject<TcpDctcpFloor>(this); }
};

NS_OBJECT_ENSURE_REGISTERED(TcpDctcpFloor);

/* ------------------------------------------------------------------ */
/* per-flow ECMP routing for the leaf-spine                            */
/* ------------------------------------------------------------------ */

struct Fabric
{
    int leaves, spines, hpl;
    std::map<uint32_t, int> ipToHost;        /* host address -> host index */
    std::vector<uint32_t> hostIf;            /* host -> its interface */
    std::vector<std::vector<uint32_t>> leafToHostIf; /* [leaf][local host] */
    std::vector<std::vector<uint32_t>> leafToSpineIf; /* [leaf][spine] */
    std::vector<std::vector<uint32_t>> spineToLeafIf; /* [spine][leaf] */
};

static Fabric g_fab;
static bool g_spray = false;                 /* --routing=spray_random */
static Ptr<UniformRandomVariable> g_sprayRng;

static inline uint64_t
fmix64(uint64_t k)
{
    k ^= k >> 33;
    k *= 0xff51afd7ed558ccdULL;
    k ^= k >> 33;
    k *= 0xc4ceb9fe1a85ec53ULL;
    k ^= k >> 33;
    return k;
}

class LeafSpineRouting : public Ipv4RoutingProtocol
{
  public:
    LeafSpineRouting(int role, int index, uint64_t seed) : m_role(role), m_index(index), m_seed(seed)
    {
    }
    /* role: 0 host, 1 leaf, 2 spine */

    Ptr<Ipv4Route> RouteOutput(Ptr<Packet> p, const Ipv4Header& header, Ptr<NetDevice> oif,
                               Socket::SocketErrno& sockerr) override
    {
        int32_t ifc = Lookup(header, p, false);
        if (ifc < 0) {
            sockerr = Socket::ERROR_NOROUTETOHOST;
            return nullptr;
        }
        sockerr = Socket::ERROR_NOTERROR;
        return RouteFor(ifc);
    }

    bool RouteInput(Ptr<const Packet> p, const Ipv4Header& header, Ptr<const NetDevice> idev,
                    UnicastForwardCallback ucb, MulticastForwardCallback mcb,
                    LocalDeliverCallback lcb, ErrorCallback ecb) override
    {
        uint32_t iif = m_ipv4->GetInterfaceForDevice(idev);
        if (m_ipv4->IsDestinationAddress(header.GetDestination(), iif)) {
            if (lcb.IsNull())
                return false;
            lcb(p, header, iif);
            return true;
        }
        int32_t ifc = Lookup(header, p, true);
        if (ifc < 0) {
            ecb(p, header, Socket::ERROR_NOROUTETOHOST);
            return false;
        }
        ucb(RouteFor(ifc), p, header);
        return true;
    }

    void NotifyInterfaceUp(uint32_t) override {}
    void NotifyInterfaceDown(uint32_t) override {}
    void NotifyAddAddress(uint32_t, Ipv4InterfaceAddress) override {}
    void NotifyRemoveAddress(uint32_t, Ipv4InterfaceAddress) override {}
    void SetIpv4(Ptr<Ipv4> ipv4) override { m_ipv4 = ipv4; }
    void PrintRoutingTable(Ptr<OutputStreamWrapper> stream, Time::Unit) const override
    {
        *stream->GetStream() << "LeafSpineRouting role " << m_role << " index " << m_index
                             << "\n";
    }

  private:
    Ptr<Ipv4Route> RouteFor(uint32_t ifc)
    {
        if (m_routes.size() <= ifc)
            m_routes.resize(ifc + 1);
        if (!m_routes[ifc]) {
            Ptr<Ipv4Route> r = Create<Ipv4Route>();
            Ptr<NetDevice> dev = m_ipv4->GetNetDevice(ifc);
            r->SetSource(m_ipv4->GetAddress(ifc, 0).GetLocal());
            r->SetDestination(Ipv4Address::GetBroadcast());
            /* point-to-point: the gateway is the device's peer; the
             * address is only used to skip ARP, which PPP does not have */
            r->SetGateway(Ipv4Address("0.0.0.0"));
            r->SetOutputDevice(dev);
            m_routes[ifc] = r;
        }
        return m_routes[ifc];
    }

    int32_t Lookup(const Ipv4Header& h, Ptr<const Packet> p, bool hasL4)
    {
        if (m_role == 0)
            return (int32_t)g_fab.hostIf[m_index];
        auto it = g_fab.ipToHost.find(h.GetDestination().Get());
        if (it == g_fab.ipToHost.end())
            return -1;
        int host = it->second, leaf = host / g_fab.hpl;
        if (m_role == 2)
            return (int32_t)g_fab.spineToLeafIf[m_index][leaf];
        if (leaf == m_index)
            return (int32_t)g_fab.leafToHostIf[m_index][host % g_fab.hpl];
        if (g_spray)
            return (int32_t)g_fab.leafToSpineIf[m_index][g_sprayRng->GetInteger(
                0, (uint32_t)g_fab.spines - 1)];
        /* ECMP across the spines: a hash of the 5-tuple.  The hash is
         * symmetric and its seed is the same at every leaf, so a flow's
         * ACKs take the spine its data takes: aisim sends ACKs along the
         * reverse of the data's route.  (In a two-tier leaf-spine this is
         * the only ECMP decision on a path, so per-switch seeds would
         * change nothing but that symmetry.) */
        uint8_t ports[4] = {0, 0, 0, 0};
        if (hasL4 && p && p->GetSize() >= 4)
            p->CopyData(ports, 4);
        uint64_t a = (uint64_t)h.GetSource().Get() << 16 | (uint32_t)(ports[0] << 8 | ports[1]);
        uint64_t b = (uint64_t)h.GetDestination().Get() << 16 | (uint32_t)(ports[2] << 8 | ports[3]);
        if (a > b)
            std::swap(a, b);
        uint64_t key = fmix64(fmix64(a ^ m_seed) ^ b ^ ((uint64_t)h.GetProtocol() << 56));
        uint32_t s = (uint32_t)(key % (uint64_t)g_fab.spines);
        return (int32_t)g_fab.leafToSpineIf[m_index][s];
    }

    Ptr<Ipv4> m_ipv4;
    int m_role, m_index;
    uint64_t m_seed;
    std::vector<Ptr<Ipv4Route>> m_routes;
};

static std::map<uint32_t, std::pair<int, int>> g_nodeRole; /* node id -> (role, index) */
static uint64_t g_hashSeed = 1;

class LeafSpineRoutingHelper : public Ipv4RoutingHelper
{
  public:
    Ipv4RoutingHelper* Copy() const override { return new LeafSpineRoutingHelper(*this); }
    Ptr<Ipv4RoutingProtocol> Create(Ptr<Node> node) const override
    {
        auto r = g_nodeRole.at(node->GetId());
        uint64_t seed = fmix64(g_hashSeed * 0x9e3779b97f4a7c15ULL + 1);
        return ns3::Create<LeafSpineRouting>(r.first, r.second, seed);
    }
};

/* ------------------------------------------------------------------ */
/* flows                                                               */
/* ------------------------------------------------------------------ */

struct Flow
{
    long id;
    int src, dst;
    uint64_t size;
    double start;       /* aisim's start time */
    double appStart;    /* when ns-3's application opens the connection */
    double dataStart{-1};
    double finish{-1};
    uint64_t rx{0};
    uint64_t highSeq{0};
    uint32_t retx{0}, timeouts{0}, recoveries{0};
    std::set<uint32_t> rtxSeqs; /* sequence numbers retransmitted so far */
    bool toPending{false};      /* a timeout's first retransmission is next */
    TcpSocketState::TcpCongState_t state{TcpSocketState::CA_OPEN};
    Ptr<BulkSendApplication> app; /* --connect=start */
    Ptr<Socket> sock;             /* --connect=zero */
    uint64_t queued{0};           /* bytes handed to sock */
};

static std::vector<Flow> g_flows;
/* timeouts by the state they interrupted, and how many resent a segment
 * that had already been retransmitted (a lost retransmission) */
static uint64_t g_toFromOpen = 0, g_toFromRecovery = 0, g_toFromLoss = 0, g_toHeadRtx = 0;
static size_t g_done = 0;
static long g_traceFlow = -1; /* --traceFlow: one flow's segments on stderr */

static void
SinkRx(size_t i, Ptr<const Packet> p, const Address&)
{
    Flow& f = g_flows[i];
    f.rx += p->GetSize();
    if (f.finish < 0 && f.size > 0 && f.rx >= f.size) {
        f.finish = Simulator::Now().GetSeconds();
        if (++g_done == g_flows.size())
            Simulator::Stop();
    }
}

static void
SockTx(size_t i, Ptr<const Packet> p, const TcpHeader& h, Ptr<const TcpSocketBase>)
{
    Flow& f = g_flows[i];
    uint32_t n = p->GetSize();
    if (n == 0)
        return;
    if (f.dataStart < 0)
        f.dataStart = Simulator::Now().GetSeconds();
    if (f.id == g_traceFlow)
        fprintf(stderr, "%.9f flow %ld tx seq %u len %u flags %s\n",
                Simulator::Now().GetSeconds(), f.id, h.GetSequenceNumber().GetValue(), n,
                TcpHeader::FlagsToString(h.GetFlags()).c_str());
    uint64_t seq = h.GetSequenceNumber().GetValue(); /* ns-3 ISN is 0: SYN 0, data from 1 */
    if (seq + n <= f.highSeq) {
        f.retx++;
        if (f.toPending && f.rtxSeqs.count((uint32_t)seq))
            g_toHeadRtx++;
        f.rtxSeqs.insert((uint32_t)seq);
    } else {
        f.highSeq = seq + n;
    }
    f.toPending = false;
}

static void
SockCongState(size_t i, TcpSocketState::TcpCongState_t old, TcpSocketState::TcpCongState_t now)
{
    if (g_flows[i].id == g_traceFlow)
        fprintf(stderr, "%.9f flow %ld congstate %s\n", Simulator::Now().GetSeconds(),
                g_flows[i].id, TcpSocketState::TcpCongStateName[now]);
    (void)old;
    g_flows[i].state = now;
    if (now == TcpSocketState::CA_RECOVERY)
        g_flows[i].recoveries++;
}

/* A retransmission timeout doubles the RTO (ReTxTimeout, before it changes
 * the congestion state and resends); an RTT sample recomputes it and does
 * not double it exactly.  Counting CA_LOSS entries instead would miss a
 * timeout in CA_LOSS: the traced state does not change. */
static void
SockRto(size_t i, Time old, Time now)
{
    Flow& f = g_flows[i];
    if (now.GetTimeStep() != 2 * old.GetTimeStep() || old.IsZero())
        return;
    f.timeouts++;
    f.toPending = true;
    if (f.state == TcpSocketState::CA_RECOVERY)
        g_toFromRecovery++;
    else if (f.state == TcpSocketState::CA_LOSS)
        g_toFromLoss++;
    else
        g_toFromOpen++;
}

static void
TraceCwnd(size_t i, uint32_t, uint32_t now)
{
    fprintf(stderr, "%.9f flow %ld cwnd %u\n", Simulator::Now().GetSeconds(), g_flows[i].id, now);
}

static void
TraceRto(size_t i, Time, Time now)
{
    fprintf(stderr, "%.9f flow %ld rto %.6f ms\n", Simulator::Now().GetSeconds(), g_flows[i].id,
            now.GetSeconds() * 1e3);
}

static void
TraceRx(size_t i, Ptr<const Packet>, const TcpHeader& h, Ptr<const TcpSocketBase>)
{
    fprintf(stderr, "%.9f flow %ld rx ack %u flags %s\n", Simulator::Now().GetSeconds(),
            g_flows[i].id, h.GetAckNumber().GetValue(),
            TcpHeader::FlagsToString(h.GetFlags()).c_str());
}

static void HookSocket(size_t i);

/* --connect=zero: the connection is opened at time 0 on the empty network,
 * and the flow's bytes are handed to it at start_s */
static void
SockFill(size_t i, Ptr<Socket> s, uint32_t)
{
    Flow& f = g_flows[i];
    while (f.queued < f.size) {
        uint32_t n = (uint32_t)std::min<uint64_t>(f.size - f.queued, 146000);
        if (s->GetTxAvailable() < n)
            return; /* the send callback comes back for the rest */
        if (s->Send(Create<Packet>(n)) < 0)
            return;
        f.queued += n;
    }
}

static void
SockOpen(size_t i, Ipv4Address dst, uint16_t port, Ptr<Node> node)
{
    Flow& f = g_flows[i];
    f.sock = Socket::CreateSocket(node, TcpSocketFactory::GetTypeId());
    f.sock->Bind();
    f.sock->Connect(InetSocketAddress(dst, port));
    HookSocket(i);
}

static void
SockStart(size_t i)
{
    Flow& f = g_flows[i];
    f.sock->SetSendCallback(MakeBoundCallback(&SockFill, i));
    SockFill(i, f.sock, 0);
}

static void
HookSocket(size_t i)
{
    Ptr<Socket> s = g_flows[i].sock ? g_flows[i].sock : g_flows[i].app->GetSocket();
    if (!s)
        return;
    s->TraceConnectWithoutContext("Tx", MakeBoundCallback(&SockTx, i));
    s->TraceConnectWithoutContext("CongState", MakeBoundCallback(&SockCongState, i));
    s->TraceConnectWithoutContext("RTO", MakeBoundCallback(&SockRto, i));
    if (g_flows[i].id == g_traceFlow) {
        s->TraceConnectWithoutContext("CongestionWindow", MakeBoundCallback(&TraceCwnd, i));
        s->TraceConnectWithoutContext("RTO", MakeBoundCallback(&TraceRto, i));
        s->TraceConnectWithoutContext("Rx", MakeBoundCallback(&TraceRx, i));
    }
}

static uint64_t g_txPkts = 0;
static void
PhyTx(Ptr<const Packet>)
{
    g_txPkts++;
}

static int
HostIndex(const std::string& name)
{
    if (name.size() < 2 || name[0] != 'h')
        return -1;
    return std::stoi(name.substr(1));
}

static void
ReadFlows(const std::string& path, int nhosts)
{
    std::ifstream in(path);
    NS_ABORT_MSG_IF(!in, "cannot open " << path);
    std::string line;
    std::getline(in, line);
    std::vector<std::string> cols;
    {
        std::stringstream ss(line);
        std::string c;
        while (std::getline(ss, c, ','))
            cols.push_back(c);
    }
    auto col = [&](const char* n) {
        for (size_t k = 0; k < cols.size(); k++)
            if (cols[k] == n)
                return (int)k;
        NS_ABORT_MSG("flows file has no column " << n);
        return -1;
    };
    int cid = col("id"), csrc = col("src"), cdst = col("dst"), csz = col("size_bytes"),
        cst = col("start_s");
    while (std::getline(in, line)) {
        if (line.empty())
            continue;
        std::vector<std::string> v;
        std::stringstream ss(line);
        std::string c;
        while (std::getline(ss, c, ','))
            v.push_back(c);
        Flow f;
        f.id = std::stol(v[cid]);
        f.src = HostIndex(v[csrc]);
        f.dst = HostIndex(v[cdst]);
        f.size = v[csz].empty() ? 0 : std::stoull(v[csz]); /* 0: long-lived */
        f.start = std::stod(v[cst]);
        NS_ABORT_MSG_IF(f.src < 0 || f.src >= nhosts || f.dst < 0 || f.dst >= nhosts ||
                            f.src == f.dst,
                        "bad hosts in " << line);
        g_flows.push_back(f);
    }
}

int
main(int argc, char* argv[])
{
    std::string flowsPath, outPath = "ns3-flows.csv", summaryPath, scheduler = "map";
    std::string dctcp = "floor", cc = "dctcp";
    int leaves = 4, spines = 2, hpl = 8;
    double hostGbps = 10, fabricGbps = 40, delayUs = 1;
    uint64_t hostBuf = 512 * 1024, fabricBuf = 1 << 20, hostK = 97500, fabricK = 390000;
    double minRtoMs = 1;
    bool pppComp = true, handshakeComp = true;
    std::string connect = "auto";
    uint32_t segSize = 1460, iw = 10;
    double maxTime = 60, stopTime = 0;
    std::string routing = "ecmp";

    CommandLine cmd(__FILE__);
    cmd.AddValue("flows", "aisim flows.csv to replay", flowsPath);
    cmd.AddValue("out", "per-flow CSV to write", outPath);
    cmd.AddValue("summary", "key value summary to write", summaryPath);
    cmd.AddValue("leaves", "leaves", leaves);
    cmd.AddValue("spines", "spines", spines);
    cmd.AddValue("hostsPerLeaf", "hosts per leaf", hpl);
    cmd.AddValue("hostGbps", "host link rate", hostGbps);
    cmd.AddValue("fabricGbps", "fabric link rate", fabricGbps);
    cmd.AddValue("delayUs", "propagation delay of every link", delayUs);
    cmd.AddValue("hostBuf", "host-link port buffer, bytes", hostBuf);
    cmd.AddValue("fabricBuf", "fabric-link port buffer, bytes", fabricBuf);
    cmd.AddValue("hostK", "host-link ECN step threshold, bytes", hostK);
    cmd.AddValue("fabricK", "fabric-link ECN step threshold, bytes", fabricK);
    cmd.AddValue("minRtoMs", "TCP minimum RTO, ms", minRtoMs);
    cmd.AddValue("segSize", "MSS", segSize);
    cmd.AddValue("iw", "initial cwnd, segments", iw);
    cmd.AddValue("pppComp", "scale link rates by (1500+2)/1500 so the 2-byte PPP header "
                            "costs no time on a full packet", pppComp);
    cmd.AddValue("handshakeComp", "open each connection one empty-network handshake before "
                                  "its start time, so data leaves at start_s", handshakeComp);
    cmd.AddValue("connect", "start: open each connection at start_s (less --handshakeComp); "
                            "zero: open every connection at time 0 on the empty network and "
                            "send at start_s (no SYN queues behind data or is lost: aisim has "
                            "no handshake); auto: start with dctcp, zero with newreno", connect);
    cmd.AddValue("hashSeed", "seed of the ECMP hash", g_hashSeed);
    cmd.AddValue("cc", "dctcp (ECN, DCTCP) | newreno (TcpNewReno, no ECN: drop-tail only)", cc);
    cmd.AddValue("dctcp", "floor (cwnd cut to no less than 1 MSS, as aisim) | stock (ns-3's "
                          "TcpDctcp)", dctcp);
    cmd.AddValue("scheduler", "map | heap | calendar | list", scheduler);
    cmd.AddValue("traceFlow", "print this flow's segments, ACKs, cwnd, RTO on stderr", g_traceFlow);
    cmd.AddValue("maxTime", "safety stop, simulated seconds", maxTime);
    cmd.AddValue("stop", "end of the run, simulated seconds (aisim's stop; needed with "
                         "long-lived flows); 0: when every flow has completed", stopTime);
    cmd.AddValue("routing", "ecmp (per-flow hash) | spray_random (a random spine per packet)",
                 routing);
    cmd.Parse(argc, argv);
    NS_ABORT_MSG_IF(flowsPath.empty(), "--flows=FILE is required");

    auto t0 = std::chrono::steady_clock::now();

    if (scheduler == "heap")
        Config::SetGlobal("SchedulerType", StringValue("ns3::HeapScheduler"));
    else if (scheduler == "calendar")
        Config::SetGlobal("SchedulerType", StringValue("ns3::CalendarScheduler"));
    else if (scheduler == "list")
        Config::SetGlobal("SchedulerType", StringValue("ns3::ListScheduler"));
    else
        Config::SetGlobal("SchedulerType", StringValue("ns3::MapScheduler"));

    /* transport */
    NS_ABORT_MSG_IF(dctcp != "floor" && dctcp != "stock", "--dctcp: floor or stock");
    NS_ABORT_MSG_IF(cc != "dctcp" && cc != "newreno", "--cc: dctcp or newreno");
    const bool newreno = cc == "newreno";
    if (connect == "auto")
        connect = newreno ? "zero" : "start";
    NS_ABORT_MSG_IF(connect != "start" && connect != "zero", "--connect: start, zero or auto");
    Config::SetDefault("ns3::TcpL4Protocol::SocketType",
                       TypeIdValue(newreno           ? TcpNewReno::GetTypeId()
                                   : dctcp == "floor" ? TcpDctcpFloor::GetTypeId()
                                                      : TcpDctcp::GetTypeId()));
    /* Loss recovery, both modes (ns-3.37 has no RACK, TLP or early
     * retransmit; its SACK sender follows RFC 6675): classic NewReno
     * window inflation as aisim (ns-3's default is PRR), three duplicate
     * ACKs (ReTxThreshold, the default), no limited transmit (aisim has
     * none). */
    Config::SetDefault("ns3::TcpL4Protocol::RecoveryType",
                       TypeIdValue(TcpClassicRecovery::GetTypeId()));
    Config::SetDefault("ns3::TcpSocket::SegmentSize", UintegerValue(segSize));
    Config::SetDefault("ns3::TcpSocket::InitialCwnd", UintegerValue(iw));
    Config::SetDefault("ns3::TcpSocket::DelAckCount", UintegerValue(1));
    Config::SetDefault("ns3::TcpSocket::SndBufSize", UintegerValue(64u << 20));
    Config::SetDefault("ns3::TcpSocket::RcvBufSize", UintegerValue(64u << 20));
    Config::SetDefault("ns3::TcpSocket::TcpNoDelay", BooleanValue(true));
    Config::SetDefault("ns3::TcpSocketBase::MinRto", TimeValue(MicroSeconds(minRtoMs * 1000)));
    Config::SetDefault("ns3::TcpSocketBase::ClockGranularity", TimeValue(NanoSeconds(1)));
    Config::SetDefault("ns3::TcpSocketBase::Sack", BooleanValue(true));
    Config::SetDefault("ns3::TcpSocketBase::Timestamp", BooleanValue(false));
    Config::SetDefault("ns3::TcpSocketBase::LimitedTransmit", BooleanValue(false));
    Config::SetDefault("ns3::TcpSocketBase::ReTxThreshold", UintegerValue(3));
    /* NewReno: no ECN, so no packet is ECT and the step marks nothing
     * (Ipv4QueueDiscItem::Mark fails on a not-ECT packet, and only
     * successful marks are counted); the summary's ecn_marks and
     * ect_data_enqueues show it (both 0) */
    Config::SetDefault("ns3::TcpSocketBase::UseEcn", StringValue(newreno ? "Off" : "On"));
    Config::SetDefault("ns3::TcpDctcp::DctcpShiftG", DoubleValue(0.0625));
    Config::SetDefault("ns3::TcpDctcp::DctcpAlphaOnInit", DoubleValue(1.0));

    NS_ABORT_MSG_IF(routing != "ecmp" && routing != "spray_random",
                    "--routing: ecmp or spray_random");
    g_spray = routing == "spray_random";
    g_sprayRng = CreateObject<UniformRandomVariable>();
    const int nh = leaves * hpl;
    ReadFlows(flowsPath, nh);

    /* nodes: hosts 0..nh-1, leaves, spines */
    NodeContainer hosts, leafN, spineN;
    hosts.Create(nh);
    leafN.Create(leaves);
    spineN.Create(spines);
    for (int i = 0; i < nh; i++)
        g_nodeRole[hosts.Get(i)->GetId()] = {0, i};
    for (int i = 0; i < leaves; i++)
        g_nodeRole[leafN.Get(i)->GetId()] = {1, i};
    for (int i = 0; i < spines; i++)
        g_nodeRole[spineN.Get(i)->GetId()] = {2, i};

    InternetStackHelper stack;
    stack.SetIpv6StackInstall(false);
    stack.SetRoutingHelper(LeafSpineRoutingHelper());
    stack.InstallAll();

    const double comp = pppComp ? 1502.0 / 1500.0 : 1.0;
    auto mkP2p = [&](double gbps) {
        PointToPointHelper p;
        p.SetDeviceAttribute("DataRate",
                             DataRateValue(DataRate((uint64_t)(gbps * 1e9 * comp + 0.5))));
        p.SetChannelAttribute("Delay", TimeValue(NanoSeconds(delayUs * 1000)));
        p.SetQueue("ns3::DropTailQueue<Packet>", "MaxSize", QueueSizeValue(QueueSize("1p")));
        return p;
    };
    PointToPointHelper hostP2p = mkP2p(hostGbps), fabP2p = mkP2p(fabricGbps);

    auto installQ = [&](NetDeviceContainer devs, uint64_t k, uint64_t buf) {
        TrafficControlHelper tch;
        tch.SetRootQueueDisc("ns3::StepEcnQueueDisc", "K", UintegerValue(k), "Buffer",
                             UintegerValue(buf));
        QueueDiscContainer qds = tch.Install(devs);
        for (uint32_t d = 0; d < devs.GetN(); d++) {
            Ptr<PointToPointNetDevice> pd = DynamicCast<PointToPointNetDevice>(devs.Get(d));
            DynamicCast<StepEcnQueueDisc>(qds.Get(d))->SetDeviceQueue(pd->GetQueue(), 2);
            pd->TraceConnectWithoutContext("PhyTxBegin", MakeCallback(&PhyTx));
        }
    };

    Ipv4AddressHelper addr;
    addr.SetBase("10.0.0.0", "255.255.255.252");
    g_fab.leaves = leaves;
    g_fab.spines = spines;
    g_fab.hpl = hpl;
    g_fab.hostIf.assign(nh, 0);
    g_fab.leafToHostIf.assign(leaves, std::vector<uint32_t>(hpl, 0));
    g_fab.leafToSpineIf.assign(leaves, std::vector<uint32_t>(spines, 0));
    g_fab.spineToLeafIf.assign(spines, std::vector<uint32_t>(leaves, 0));
    std::vector<Ipv4Address> hostAddr(nh);

    for (int h = 0; h < nh; h++) {
        int l = h / hpl;
        NetDeviceContainer d = hostP2p.Install(hosts.Get(h), leafN.Get(l));
        installQ(d, hostK, hostBuf);
        Ipv4InterfaceContainer ic = addr.Assign(d);
        addr.NewNetwork();
        hostAddr[h] = ic.GetAddress(0);
        g_fab.ipToHost[ic.GetAddress(0).Get()] = h;
        g_fab.hostIf[h] = hosts.Get(h)->GetObject<Ipv4>()->GetInterfaceForDevice(d.Get(0));
        g_fab.leafToHostIf[l][h % hpl] =
            leafN.Get(l)->GetObject<Ipv4>()->GetInterfaceForDevice(d.Get(1));
    }
    for (int l = 0; l < leaves; l++)
        for (int s = 0; s < spines; s++) {
            NetDeviceContainer d = fabP2p.Install(leafN.Get(l), spineN.Get(s));
            installQ(d, fabricK, fabricBuf);
            addr.Assign(d);
            addr.NewNetwork();
            g_fab.leafToSpineIf[l][s] =
                leafN.Get(l)->GetObject<Ipv4>()->GetInterfaceForDevice(d.Get(0));
            g_fab.spineToLeafIf[s][l] =
                spineN.Get(s)->GetObject<Ipv4>()->GetInterfaceForDevice(d.Get(1));
        }

    /* empty-network handshake (SYN out, SYN-ACK back): 48 B segments
     * (20 IP + 20 TCP + 8 options) + 2 B PPP per hop */
    auto ser = [&](double gbps) { return (48 + 2) * 8 / (gbps * 1e9 * comp); };
    double hsSame = 2 * (2 * ser(hostGbps) + 2 * delayUs * 1e-6);
    double hsCross = 2 * (2 * ser(hostGbps) + 2 * ser(fabricGbps) + 4 * delayUs * 1e-6);

    std::vector<uint16_t> nextPort(nh, 1000);
    double lastStart = 0;
    for (size_t i = 0; i < g_flows.size(); i++) {
        Flow& f = g_flows[i];
        bool same = f.src / hpl == f.dst / hpl;
        f.appStart = f.start - (handshakeComp ? (same ? hsSame : hsCross) : 0);
        if (f.appStart < 0 || connect == "zero")
            f.appStart = 0;
        if (f.start > lastStart)
            lastStart = f.start;
        uint16_t port = nextPort[f.dst]++;
        NS_ABORT_MSG_IF(nextPort[f.dst] == 0, "too many flows to host " << f.dst);

        PacketSinkHelper sinkH("ns3::TcpSocketFactory",
                               InetSocketAddress(Ipv4Address::GetAny(), port));
        ApplicationContainer sa = sinkH.Install(hosts.Get(f.dst));
        sa.Start(Seconds(0));
        sa.Get(0)->TraceConnectWithoutContext("Rx", MakeBoundCallback(&SinkRx, i));

        if (connect == "zero") {
            Simulator::Schedule(Seconds(0), &SockOpen, i, hostAddr[f.dst], port, hosts.Get(f.src));
            Simulator::Schedule(Seconds(f.start), &SockStart, i);
            continue;
        }
        BulkSendHelper bulk("ns3::TcpSocketFactory", InetSocketAddress(hostAddr[f.dst], port));
        bulk.SetAttribute("MaxBytes", UintegerValue(f.size));
        bulk.SetAttribute("SendSize", UintegerValue(segSize * 100));
        ApplicationContainer ba = bulk.Install(hosts.Get(f.src));
        ba.Start(Seconds(f.appStart));
        f.app = DynamicCast<BulkSendApplication>(ba.Get(0));
        /* the socket exists once the application has started; no data
         * leaves before the SYN-ACK, a round trip later */
        Simulator::Schedule(Seconds(f.appStart) + NanoSeconds(1), &HookSocket, i);
    }
    Simulator::Stop(Seconds(stopTime > 0 ? stopTime : lastStart + maxTime));

    auto t1 = std::chrono::steady_clock::now();
    Simulator::Run();
    auto t2 = std::chrono::steady_clock::now();
    double setupS = std::chrono::duration<double>(t1 - t0).count();
    double runS = std::chrono::duration<double>(t2 - t1).count();
    uint64_t events = Simulator::GetEventCount();
    double simEnd = Simulator::Now().GetSeconds();

    FILE* out = fopen(outPath.c_str(), "w");
    NS_ABORT_MSG_IF(!out, "cannot write " << outPath);
    fprintf(out, "id,src,dst,size_bytes,start_s,finish_s,fct_s,data_start_s,fct_handshake_s,"
                 "delivered_bytes,retransmits,timeouts,recoveries\n");
    uint64_t retx = 0, tos = 0, recs = 0;
    for (const Flow& f : g_flows) {
        retx += f.retx;
        tos += f.timeouts;
        recs += f.recoveries;
        if (f.finish >= 0)
            fprintf(out, "%ld,h%d,h%d,%" PRIu64 ",%.12g,%.12g,%.12g,%.12g,%.12g,%" PRIu64
                         ",%u,%u,%u\n",
                    f.id, f.src, f.dst, f.size, f.start, f.finish, f.finish - f.dataStart,
                    f.dataStart, f.finish - f.appStart, f.rx, f.retx, f.timeouts, f.recoveries);
        else
            fprintf(out, "%ld,h%d,h%d,%" PRIu64 ",%.12g,nan,nan,%.12g,nan,%" PRIu64 ",%u,%u,%u\n",
                    f.id, f.src, f.dst, f.size, f.start, f.dataStart, f.rx, f.retx, f.timeouts,
                    f.recoveries);
    }
    fclose(out);

    std::ostringstream sum;
    sum << "flows " << g_flows.size() << "\n"
        << "flows_completed " << g_done << "\n"
        << "sim_end_s " << simEnd << "\n"
        << "setup_wall_s " << setupS << "\n"
        << "run_wall_s " << runS << "\n"
        << "events " << events << "\n"
        << "packet_tx " << g_txPkts << "\n"
        << "drops " << StepEcnQueueDisc::s_drops << "\n"
        << "ecn_marks " << StepEcnQueueDisc::s_marks << "\n"
        << "ecn_marks_data " << StepEcnQueueDisc::s_dataMarks << "\n"
        << "retransmits " << retx << "\n"
        << "timeouts " << tos << "\n"
        << "fast_recoveries " << recs << "\n"
        << "timeouts_from_open_disorder " << g_toFromOpen << "\n"
        << "timeouts_from_recovery " << g_toFromRecovery << "\n"
        << "timeouts_from_loss " << g_toFromLoss << "\n"
        << "timeouts_resending_a_retransmission " << g_toHeadRtx << "\n"
        << "max_queue_bytes " << StepEcnQueueDisc::s_maxOcc << "\n"
        << "ect_data_enqueues " << StepEcnQueueDisc::s_ectData << "\n"
        << "cc " << cc << "\n"
        << "scheduler " << scheduler << "\n"
        << "dctcp " << dctcp << "\n"
        << "routing " << routing << "\n"
        << "connect " << connect << "\n";
    fputs(sum.str().c_str(), stdout);
    if (!summaryPath.empty()) {
        std::ofstream s(summaryPath);
        s << sum.str();
    }
    Simulator::Destroy();
    return g_done == g_flows.size() ? 0 : 1;
}
