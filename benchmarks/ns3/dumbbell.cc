// The reference workload of benchmarks/vs_ns2.py in ns-3 (Debian's libns3-dev, 3.37), for the
// speed comparison only: a dumbbell whose bottleneck has a RED queue disc in each direction,
// one sender and one receiver node per flow on point-to-point access links, one BulkSend TCP
// flow (SACK, NewReno congestion control, classic recovery) per sender.
//
// It reads the workload from the file named by its only argument, one record per line, every
// value a number (benchmarks/vs_ns2.py writes it from the same expanded scenario it exports to
// ns-2; nothing from a scenario reaches a compiler or an interpreter):
//   duration <s>
//   packet <bytes>               (TCP payload per segment)
//   max_window <packets>         (read, not applied: see the buffers below)
//   initial_window <packets>
//   min_rto <s> / tick <s> / initial_rto <s>
//   bottleneck <rate b/s> <delay s>
//   red <limit pkts> <min_th> <max_th> <q_weight> <max_p> <gentle 0|1> <wait 0|1> <mean_pkt_size>
//   flow <access_delay s> <receiver_delay s> <access_rate b/s> <start s>
// and prints `delivered_packets N` (in-order payload bytes received by the sinks / packet) and
// `events N` (ns-3's own event count).
//
// Build (benchmarks/vs_ns2.py does it, cached under target/ns3/):
//   g++ -O2 -std=c++17 dumbbell.cc -o dumbbell -lns3-core -lns3-network -lns3-internet \
//       -lns3-point-to-point -lns3-applications -lns3-traffic-control

#include "ns3/applications-module.h"
#include "ns3/core-module.h"
#include "ns3/internet-module.h"
#include "ns3/network-module.h"
#include "ns3/point-to-point-module.h"
#include "ns3/traffic-control-module.h"

#include <cstdlib>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

using namespace ns3;

namespace
{

struct Flow
{
    double accessDelay;
    double receiverDelay;
    double accessRate;
    double start;
};

struct Workload
{
    double duration = 0;
    uint32_t packet = 1000;
    uint32_t maxWindow = 128;
    uint32_t initialWindow = 2;
    double minRto = 0.2;
    double tick = 0.01;
    double initialRto = 3.0;
    double rate = 0;
    double delay = 0;
    double limit = 0, minTh = 0, maxTh = 0, qWeight = 0, maxP = 0, meanPktSize = 1000;
    bool gentle = true, wait = true, haveRed = false;
    std::vector<Flow> flows;
};

[[noreturn]] void
Fail(const std::string& what)
{
    std::cerr << "dumbbell: " << what << std::endl;
    std::exit(2);
}

Workload
Read(const char* path)
{
    std::ifstream in(path);
    if (!in)
    {
        Fail(std::string("cannot read ") + path);
    }
    Workload w;
    std::string line;
    int n = 0;
    while (std::getline(in, line))
    {
        ++n;
        std::istringstream s(line);
        std::string key;
        if (!(s >> key))
        {
            continue;
        }
        bool ok = true;
        if (key == "duration")
            ok = bool(s >> w.duration);
        else if (key == "packet")
            ok = bool(s >> w.packet);
        else if (key == "max_window")
            ok = bool(s >> w.maxWindow);
        else if (key == "initial_window")
            ok = bool(s >> w.initialWindow);
        else if (key == "min_rto")
            ok = bool(s >> w.minRto);
        else if (key == "tick")
            ok = bool(s >> w.tick);
        else if (key == "initial_rto")
            ok = bool(s >> w.initialRto);
        else if (key == "bottleneck")
            ok = bool(s >> w.rate >> w.delay);
        else if (key == "red")
        {
            int g = 0, wt = 0;
            ok = bool(s >> w.limit >> w.minTh >> w.maxTh >> w.qWeight >> w.maxP >> g >> wt >>
                      w.meanPktSize);
            w.gentle = g != 0;
            w.wait = wt != 0;
            w.haveRed = true;
        }
        else if (key == "flow")
        {
            Flow f{};
            ok = bool(s >> f.accessDelay >> f.receiverDelay >> f.accessRate >> f.start);
            w.flows.push_back(f);
        }
        else
            ok = false;
        if (!ok)
        {
            Fail(std::string(path) + ":" + std::to_string(n) + ": cannot read '" + line + "'");
        }
    }
    if (!(w.duration > 0) || !(w.rate > 0) || !w.haveRed || w.flows.empty())
    {
        Fail("the workload needs duration, bottleneck, red and at least one flow");
    }
    return w;
}

std::string
Rate(double bps)
{
    return std::to_string(static_cast<uint64_t>(bps)) + "bps";
}

} // namespace

int
main(int argc, char** argv)
{
    if (argc != 2)
    {
        Fail("usage: dumbbell WORKLOAD");
    }
    const Workload w = Read(argv[1]);

    // TCP as the ns-2 side runs it: SACK, NewReno's window rules with classic fast recovery,
    // no delayed ACKs, no timestamps, 1000-byte segments.
    Config::SetDefault("ns3::TcpL4Protocol::SocketType", TypeIdValue(TcpNewReno::GetTypeId()));
    Config::SetDefault("ns3::TcpL4Protocol::RecoveryType",
                       TypeIdValue(TcpClassicRecovery::GetTypeId()));
    Config::SetDefault("ns3::TcpSocketBase::Sack", BooleanValue(true));
    Config::SetDefault("ns3::TcpSocketBase::Timestamp", BooleanValue(false));
    Config::SetDefault("ns3::TcpSocketBase::MinRto", TimeValue(Seconds(w.minRto)));
    Config::SetDefault("ns3::TcpSocketBase::ClockGranularity", TimeValue(Seconds(w.tick)));
    Config::SetDefault("ns3::RttEstimator::InitialEstimation", TimeValue(Seconds(w.initialRto)));
    Config::SetDefault("ns3::TcpSocket::SegmentSize", UintegerValue(w.packet));
    Config::SetDefault("ns3::TcpSocket::InitialCwnd", UintegerValue(w.initialWindow));
    Config::SetDefault("ns3::TcpSocket::DelAckCount", UintegerValue(1));
    // The max window is not set as the receive buffer (128 000 bytes): with it, ns-3 3.37 (Debian's
    // release build) crashes at the first losses (SIGSEGV in TcpRateLinux::SkbSent, called from
    // SendDataPacket with no transmit item; 512 000-byte send buffers do the same). ns-3's default
    // buffers, 131 072 bytes each, cap the window at 131 segments instead of 128.

    const size_t n = w.flows.size();
    NodeContainer routers;
    routers.Create(2);
    NodeContainer senders, receivers;
    senders.Create(n);
    receivers.Create(n);
    InternetStackHelper stack;
    stack.Install(routers);
    stack.Install(senders);
    stack.Install(receivers);

    // The bottleneck: RED in the traffic-control layer; the device holds one packet, so the
    // queue builds in RED (the ns-2 side's queue-limit is RED's limit).
    PointToPointHelper bottleneck;
    bottleneck.SetDeviceAttribute("DataRate", StringValue(Rate(w.rate)));
    bottleneck.SetChannelAttribute("Delay", TimeValue(Seconds(w.delay)));
    bottleneck.SetQueue("ns3::DropTailQueue<Packet>", "MaxSize", StringValue("1p"));
    NetDeviceContainer core = bottleneck.Install(routers.Get(0), routers.Get(1));
    TrafficControlHelper red;
    red.SetRootQueueDisc("ns3::RedQueueDisc",
                         "MaxSize", QueueSizeValue(QueueSize(QueueSizeUnit::PACKETS,
                                                             static_cast<uint32_t>(w.limit))),
                         "MinTh", DoubleValue(w.minTh),
                         "MaxTh", DoubleValue(w.maxTh),
                         "QW", DoubleValue(w.qWeight),
                         "LInterm", DoubleValue(1.0 / w.maxP),
                         "Gentle", BooleanValue(w.gentle),
                         "Wait", BooleanValue(w.wait),
                         "MeanPktSize", UintegerValue(static_cast<uint32_t>(w.meanPktSize)),
                         "LinkBandwidth", DataRateValue(DataRate(Rate(w.rate))),
                         "LinkDelay", TimeValue(Seconds(w.delay)));
    red.Install(core);

    Ipv4AddressHelper addr;
    addr.SetBase("10.0.0.0", "255.255.255.252");
    addr.Assign(core);
    addr.NewNetwork();

    // Access links: lossless (a device queue larger than any window, no queue disc).
    std::vector<Ipv4Address> sinkAddr(n);
    TrafficControlHelper none;
    for (size_t i = 0; i < n; ++i)
    {
        const Flow& f = w.flows[i];
        PointToPointHelper access;
        access.SetDeviceAttribute("DataRate", StringValue(Rate(f.accessRate)));
        access.SetQueue("ns3::DropTailQueue<Packet>", "MaxSize", StringValue("100000p"));
        access.SetChannelAttribute("Delay", TimeValue(Seconds(f.accessDelay)));
        NetDeviceContainer up = access.Install(senders.Get(i), routers.Get(0));
        access.SetChannelAttribute("Delay", TimeValue(Seconds(f.receiverDelay)));
        NetDeviceContainer down = access.Install(receivers.Get(i), routers.Get(1));
        addr.Assign(up);
        addr.NewNetwork();
        Ipv4InterfaceContainer d = addr.Assign(down);
        addr.NewNetwork();
        none.Uninstall(up);
        none.Uninstall(down);
        sinkAddr[i] = d.GetAddress(0);
    }
    Ipv4GlobalRoutingHelper::PopulateRoutingTables();

    const uint16_t port = 5000;
    std::vector<Ptr<PacketSink>> sinks(n);
    for (size_t i = 0; i < n; ++i)
    {
        PacketSinkHelper sink("ns3::TcpSocketFactory", InetSocketAddress(Ipv4Address::GetAny(), port));
        ApplicationContainer s = sink.Install(receivers.Get(i));
        s.Start(Seconds(0));
        sinks[i] = DynamicCast<PacketSink>(s.Get(0));
        BulkSendHelper bulk("ns3::TcpSocketFactory", InetSocketAddress(sinkAddr[i], port));
        bulk.SetAttribute("MaxBytes", UintegerValue(0));
        bulk.SetAttribute("SendSize", UintegerValue(w.packet));
        ApplicationContainer a = bulk.Install(senders.Get(i));
        a.Start(Seconds(w.flows[i].start));
    }

    Simulator::Stop(Seconds(w.duration));
    Simulator::Run();
    uint64_t bytes = 0;
    for (const auto& s : sinks)
    {
        bytes += s->GetTotalRx();
    }
    std::cout << "delivered_packets " << bytes / w.packet << "\n";
    std::cout << "events " << Simulator::GetEventCount() << "\n";
    Simulator::Destroy();
    return 0;
}
