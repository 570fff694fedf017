#!/usr/bin/env python3
"""Node fixtures for a cluster on one machine: three GPU nodes whose CPUs
and memory are this machine's own.

  cluster_fixtures.py --out DIR [--lstopo FILE] [--sockets]

writes, for each node hgx-a, hgx-b and l40s-a:

  NAME.xml    an hwloc XML: this machine's recording (lstopo-no-graphics
              --of xml, or FILE) rearranged, to be loaded as this system
              (gpufleet ... --xml NAME.xml --this-system --nvml, with
              NAME.nvml: the GPUs are checked against NVML's; its CPUs,
              NUMA nodes and HostName stay this machine's)
  NAME.nvml   the fake NVML's fixture for the same GPUs (joined by PCI bus
              id; tests/fake_nvml/fake_nvml.c documents the format)

and DIR/cluster.json, what the nodes hold (bus ids, UUIDs, the CPUs each
GPU is local to, nearest NICs, MIG instances), for tests to compare with.

Why rearranged: binding must be real (the CPU set goes to the kernel) and
must tell GPUs apart on a 2-CPU, 1-NUMA machine.  So the machine's cores
(or PUs, with a single core) are split into two halves, each half inside
an hwloc Group that also holds one PCI host bridge: GPUs 0-3 and mlx5_0
under the first, GPUs 4-7 and mlx5_1 under the second.  GPUs 0-3 are then
local to the first half of the PUs and GPUs 4-7 to the second.  The NUMA
node(s) stay the machine's own, attached to the Machine, so every GPU's
memory is every node and memory binding is skipped, never refused.  With a
single PU there is one Group with both host bridges (nothing to tell
apart).  Caches, packages and the machine's own I/O devices are dropped.
With --sockets each half is an hwloc Package instead of a Group: the node
is then a 2-socket machine with one core (or more) per socket, as
`gpufleet slurm gres` and slurmd count sockets (tests/integration/
slurm.sh); binding still works, the PUs being this machine's.

Nodes (bus ids in HGX_HALVES and L40S_HALVES below; GPU i of node K = 1,
2, 3 (hgx-a, hgx-b, l40s-a) is GPU-f1ee7000-000K-4000-8000-00000000000i):
  hgx-a, hgx-b  8x H100 80GB SXM5, 18 NVLinks each into 4 NVSwitches
                (whose PCI functions sit in the second half); per half a
                Gen5 PCIe switch leading to two switches of two GPUs each
                and to a ConnectX-7 (InfiniBand; GPU-NIC PXB); hgx-b has
                GPU 6 in MIG mode with 7x 1g.10gb and GPU 7 with 3g.40gb +
                2x 2g.20gb, all idle
  l40s-a        8x L40S, no NVLink, per half one Gen4 PCIe switch with its
                4 GPUs and a ConnectX-6 Dx (RoCE; GPU-NIC PIX)
No GPU has an NVML NUMA id: on x86 the driver answers Not Supported
(../shared/fixtures/h200/nvml-dump.json), the CPU side comes from hwloc.

Exit status: 0 written; 77 lstopo-no-graphics absent (skip); 1 anything
else (a message on stderr names what is missing or wrong).
"""
import argparse
import copy
import json
import os
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET

PROG = "cluster_fixtures.py"


class Fail(Exception):
    def __init__(self, msg, code=1):
        super().__init__(msg)
        self.code = code


# --- bitmaps: hwloc's "0xhhhhhhhh,0xhhhhhhhh" (most significant word first)

def fmt_set(bits):
    if not bits:
        return "0x0"
    n = max(bits) // 32 + 1
    words = [0] * n
    for b in bits:
        words[b // 32] |= 1 << (b % 32)
    return ",".join("0x%08x" % w for w in reversed(words))


def fmt_list(bits):
    """0-3,8 (the kernel's and the fake's list syntax)."""
    out, run = [], []
    for b in sorted(bits):
        if run and b == run[-1] + 1:
            run.append(b)
            continue
        if run:
            out.append(str(run[0]) if len(run) == 1 else "%d-%d" % (run[0], run[-1]))
        run = [b]
    if run:
        out.append(str(run[0]) if len(run) == 1 else "%d-%d" % (run[0], run[-1]))
    return ",".join(out)


# --- the recording

def record(lstopo_file):
    if lstopo_file:
        try:
            with open(lstopo_file, "rb") as f:
                return f.read()
        except OSError as e:
            raise Fail("cannot read '%s': %s" % (lstopo_file, e.strerror))
    exe = shutil.which("lstopo-no-graphics")
    if exe is None:
        raise Fail("skip: lstopo-no-graphics absent (Debian package hwloc-nox)", 77)
    r = subprocess.run([exe, "--of", "xml"], stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, check=False)
    if r.returncode != 0:
        raise Fail("lstopo-no-graphics --of xml failed (exit %d): %s"
                   % (r.returncode, r.stderr.decode(errors="replace").strip()))
    return r.stdout


class Machine:
    """What we keep of a recording: the Machine, its NUMA nodes, its cores
    and PUs, and the top-level elements that are not objects."""

    def __init__(self, data, what):
        try:
            top = ET.fromstring(data)
        except ET.ParseError as e:
            raise Fail("cannot parse '%s': %s" % (what, e))
        if top.tag != "topology":
            raise Fail("'%s' is not an hwloc XML (no <topology> element)" % what)
        ver = top.get("version", "1.0")
        if not ver.startswith("2."):
            raise Fail("'%s' is hwloc XML version %s; we need 2.x (lstopo 2.x)"
                       % (what, ver))
        self.top = top
        objs = [c for c in top if c.tag == "object"]
        if len(objs) != 1 or objs[0].get("type") != "Machine":
            raise Fail("'%s' has no Machine object at its root" % what)
        self.machine = objs[0]
        self.numa = [o for o in self.machine.iter("object") if o.get("type") == "NUMANode"]
        if not self.numa:
            raise Fail("'%s' has no NUMANode object" % what)
        pus = [o for o in self.machine.iter("object") if o.get("type") == "PU"]
        if not pus:
            raise Fail("'%s' has no PU object" % what)
        self.pus = {int(p.get("os_index")): p for p in pus}
        # Cores with their PUs, in the order of their first PU.
        self.cores = []
        seen = set()
        for c in self.machine.iter("object"):
            if c.get("type") != "Core":
                continue
            ids = sorted(int(p.get("os_index")) for p in c.iter("object")
                         if p.get("type") == "PU")
            if ids:
                self.cores.append((ids, c))
                seen.update(ids)
        for i in sorted(self.pus):  # a PU without a Core is its own core
            if i not in seen:
                self.cores.append(([i], None))
        self.cores.sort(key=lambda x: x[0][0])
        self.gp_max = max(int(o.get("gp_index", "0")) for o in top.iter("object"))


# --- the nodes

LINK_GEN5 = 63.015385  # GB/s of a Gen5 x16 link, as hwloc writes it
LINK_GEN4 = 31.507692

H100 = dict(name="NVIDIA H100 80GB HBM3", pci="0302 [10de:2330] [10de:16c1] a1",
            device_id="0x233010DE", memory_mib=81559, mig=True, speed=LINK_GEN5)
L40S = dict(name="NVIDIA L40S", pci="0302 [10de:26b9] [10de:1851] a1",
            device_id="0x26B910DE", memory_mib=46068, mig=False, speed=LINK_GEN4)
CX7 = "0207 [15b3:1021] [15b3:0041] 00"       # ConnectX-7, InfiniBand
CX6DX = "0200 [15b3:101d] [15b3:0016] 00"     # ConnectX-6 Dx, Ethernet (RoCE)
NVSWITCH = "0680 [10de:22a3] [10de:1796] a1"  # NVSwitch (third generation)
ROOT_PORT = "0604 [1022:14ab] [0000:0000] 00"
PCIE_SW = "0604 [1000:c030] [1000:100b] b0"   # Broadcom PEX89xxx

# H100 80GB GPU-instance profiles: ENUM ID MEMSLICES COMPUTE STARTS MAX
# (as tests/fixtures/nvml/mig-h100.nvml, reference/mig-and-metrics.md 1.4)
H100_PROFILES = """profileset h100
gi_profile 0 19 1 1 0,1,2,3,4,5,6 7
gi_profile 7 20 1 1 0,1,2,3,4,5,6 1
gi_profile 9 15 2 1 0,2,4,6 4
gi_profile 1 14 2 2 0,2,4 3
gi_profile 2 9 4 3 0,4 2
gi_profile 3 5 4 4 0 1
gi_profile 4 0 8 7 0 1
"""
PROFILE_NAMES = {19: "1g.10gb", 20: "1g.10gb+me", 15: "1g.20gb", 14: "2g.20gb",
                 9: "3g.40gb", 5: "4g.40gb", 0: "7g.80gb"}

# A half: its host bridge's bus range and its root ports.  A root port or
# a downstream port leads to a switch: ("switch", LO, HI, children), its
# upstream port at bus LO, its downstream ports on bus LO + 1, one per
# child; a child is ("gpu"|"nic"|"nvswitch", BUS) or another switch.
# HGX: per half, a switch whose ports lead to two switches of two GPUs
# each and to the NIC (GPU-NIC: PXB, within NCCL's default GDR level).
HGX_HALVES = [
    dict(bus=(0x10, 0x5f), ports=[
        ("switch", 0x11, 0x5f, [
            ("switch", 0x15, 0x2f, [("gpu", 0x18), ("gpu", 0x2a)]),
            ("switch", 0x30, 0x5f, [("gpu", 0x3a), ("gpu", 0x5d)]),
            ("nic", 0x13)]),
    ]),
    dict(bus=(0x90, 0xef), ports=[
        ("switch", 0x91, 0xdf, [
            ("switch", 0x95, 0xaf, [("gpu", 0x9a), ("gpu", 0xab)]),
            ("switch", 0xb0, 0xdf, [("gpu", 0xba), ("gpu", 0xdb)]),
            ("nic", 0x93)]),
        ("switch", 0xe0, 0xef, [("nvswitch", 0xe4), ("nvswitch", 0xe5),
                                ("nvswitch", 0xe6), ("nvswitch", 0xe7)]),
    ]),
]
# L40S: per half, one switch with its four GPUs and the NIC (all PIX).
L40S_HALVES = [
    dict(bus=(0x15, 0x2f), ports=[
        ("switch", 0x16, 0x2f, [("gpu", 0x18), ("gpu", 0x19), ("gpu", 0x1a),
                                ("gpu", 0x1b), ("nic", 0x1c)]),
    ]),
    dict(bus=(0x95, 0xaf), ports=[
        ("switch", 0x96, 0xaf, [("gpu", 0x98), ("gpu", 0x99), ("gpu", 0x9a),
                                ("gpu", 0x9b), ("nic", 0x9c)]),
    ]),
]
NVSWITCH_BUSES = [0xe4, 0xe5, 0xe6, 0xe7]
NVLINKS_PER_SWITCH = [5, 4, 4, 5]  # 18 per H100 SXM

NODES = [
    dict(name="hgx-a", k=1, gpu=H100, halves=HGX_HALVES, nic=CX7, ib=True,
         nvlink=True, mig={}),
    dict(name="hgx-b", k=2, gpu=H100, halves=HGX_HALVES, nic=CX7, ib=True,
         nvlink=True,
         # GPU index: [(profile id, start)]
         mig={6: [(19, s) for s in range(7)],
              7: [(14, 0), (14, 2), (9, 4)]}),
    dict(name="l40s-a", k=3, gpu=L40S, halves=L40S_HALVES, nic=CX6DX, ib=False,
         nvlink=False, mig={}),
]


def uuid_of(node, i):
    return "GPU-f1ee7000-%04x-4000-8000-%012x" % (node["k"], i)


def halves_of(m):
    """Two lists of cores (each a list of PU ids); one when a single PU."""
    if len(m.pus) == 1:
        return [m.cores]
    cores = m.cores
    if len(cores) == 1:  # one core of several PUs: split the PUs
        cores = [([p], None) for p in cores[0][0]]
    h = (len(cores) + 1) // 2
    return [cores[:h], cores[h:]]


class Writer:
    def __init__(self, m):
        self.gp = m.gp_max

    def obj(self, parent, **attrs):
        self.gp += 1
        e = ET.SubElement(parent, "object")
        for k, v in attrs.items():
            e.set(k, str(v))
        e.set("gp_index", str(self.gp))
        return e

    def info(self, parent, name, value):
        e = ET.SubElement(parent, "info")
        e.set("name", name)
        e.set("value", value)


def busid(bus, dev=0, fn=0):
    return "0000:%02x:%02x.%x" % (bus, dev, fn)


def nvml_busid(bus):
    return "00000000:%02X:00.0" % bus


def endpoints(tree):
    """(kind, bus) of every endpoint below a switch or port list."""
    for t in tree:
        if t[0] == "switch":
            yield from endpoints(t[3])
        else:
            yield t


class IO:
    """Writes one half's PCI tree; collects GPU buses and NICs."""

    def __init__(self, w, node):
        self.w, self.node = w, node
        self.speed = "%f" % node["gpu"]["speed"]
        self.gpu_buses, self.nics = [], []

    def bridge(self, parent, depth, lo, hi, at, ids):
        return self.w.obj(parent, type="Bridge", bridge_type="1-1",
                          depth=str(depth),
                          bridge_pci="0000:[%02x-%02x]" % (lo, hi),
                          pci_busid=at, pci_type=ids,
                          pci_link_speed=self.speed)

    def switch(self, port, depth, sw):
        """Below a port whose range is the switch's: USP, then DSPs."""
        _, lo, hi, children = sw
        usp = self.bridge(port, depth, lo + 1, hi, busid(lo), PCIE_SW)
        for d, c in enumerate(children):
            if c[0] == "switch":
                dsp = self.bridge(usp, depth + 1, c[1], c[2], busid(lo + 1, d),
                                  PCIE_SW)
                self.switch(dsp, depth + 2, c)
            else:
                dsp = self.bridge(usp, depth + 1, c[1], c[1], busid(lo + 1, d),
                                  PCIE_SW)
                self.endpoint(dsp, *c)

    def endpoint(self, parent, kind, bus):
        w, node = self.w, self.node
        if kind == "gpu":
            w.obj(parent, type="PCIDev", pci_busid=busid(bus),
                  pci_type=node["gpu"]["pci"], pci_link_speed=self.speed)
            self.gpu_buses.append(bus)
            return
        if kind == "nvswitch":
            w.obj(parent, type="PCIDev", pci_busid=busid(bus),
                  pci_type=NVSWITCH, pci_link_speed=self.speed)
            return
        i = len(self.nics)
        dev = w.obj(parent, type="PCIDev", pci_busid=busid(bus),
                    pci_type=node["nic"], pci_link_speed=self.speed)
        # Linux's predictable names count buses in decimal
        net = ("ibp%ds0" % bus) if node["ib"] else ("ens%df0np0" % bus)
        nd = w.obj(dev, type="OSDev", name=net, osdev_type="2")
        w.info(nd, "Address", "02:f1:ee:%02x:%02x:00" % (node["k"], bus))
        w.info(nd, "Port", "1")
        of = w.obj(dev, type="OSDev", name="mlx5_%d" % i, osdev_type="3")
        guid = "f1ee:7000:%04x:%04x" % (node["k"], bus)
        w.info(of, "NodeGUID", guid)
        w.info(of, "SysImageGUID", guid)
        w.info(of, "Port1State", "4")
        w.info(of, "Port1LinkLayer", "InfiniBand" if node["ib"] else "Ethernet")
        self.nics.append(dict(name="mlx5_%d" % i, netdev=net, bus_id=busid(bus)))

    def half(self, group, half):
        """One host bridge, its root ports and what lies below them."""
        lo, hi = half["bus"]
        hb = self.w.obj(group, type="Bridge", bridge_type="0-1", depth="0",
                        bridge_pci="0000:[%02x-%02x]" % (lo, hi))
        for k, sw in enumerate(half["ports"]):
            rp = self.bridge(hb, 1, sw[1], sw[2], busid(lo, k + 1), ROOT_PORT)
            self.switch(rp, 2, sw)


def build_xml(m, node, sockets=False):
    """The node's hwloc XML (text) and what it holds; with sockets, the
    halves are Packages (sockets), else Groups."""
    w = Writer(m)
    src = m.machine
    top = ET.Element("topology", dict(m.top.attrib))
    mach = ET.SubElement(top, "object")
    for k, v in src.attrib.items():
        mach.set(k, v)
    # HostName stays this machine's: the recording is loaded as this
    # system, which gpufleet checks (src/topo/this_system.h)
    for i in src.findall("info"):
        mach.append(copy.deepcopy(i))
    w.info(mach, "GpufleetFixture",
           "tests/tools/cluster_fixtures.py: this machine's CPUs and NUMA "
           "nodes, a synthetic PCI tree")
    nodeset, cnodeset = src.get("nodeset"), src.get("complete_nodeset")
    # Memory: the machine's NUMA nodes, each local to every PU, so that
    # every GPU's memory is every node.
    for nm in m.numa:
        e = ET.SubElement(mach, "object")
        for k, v in nm.attrib.items():
            e.set(k, v)
        for attr in ("cpuset", "complete_cpuset"):
            e.set(attr, src.get(attr))
        for c in nm:
            if c.tag != "object":
                e.append(copy.deepcopy(c))
    halves = halves_of(m)
    io = IO(w, node)
    half_cpus = []
    for hi, cores in enumerate(halves):
        cpus = set(p for ids, _ in cores for p in ids)
        half_cpus.append(sorted(cpus))
        if sockets and len(halves) == 2:
            g = w.obj(mach, type="Package", os_index=str(hi),
                      cpuset=fmt_set(cpus), complete_cpuset=fmt_set(cpus),
                      nodeset=nodeset, complete_nodeset=cnodeset)
        else:
            g = w.obj(mach, type="Group", cpuset=fmt_set(cpus),
                      complete_cpuset=fmt_set(cpus), nodeset=nodeset,
                      complete_nodeset=cnodeset, dont_merge="1")
        w.info(g, "GpufleetLocality", "half %d of this machine's PUs" % hi)
        for ids, core in cores:
            parent = g
            if core is not None:
                parent = ET.SubElement(g, "object")
                for k, v in core.attrib.items():
                    parent.set(k, v)
                parent.set("nodeset", nodeset)
                parent.set("complete_nodeset", cnodeset)
                for c in core:
                    if c.tag == "info":
                        parent.append(copy.deepcopy(c))
            for p in ids:
                pu = ET.SubElement(parent, "object")
                for k, v in m.pus[p].attrib.items():
                    pu.set(k, v)
                pu.set("nodeset", nodeset)
                pu.set("complete_nodeset", cnodeset)
        # one host bridge per half; a single PU: both in the one Group
        for half in (node["halves"][hi:hi + 1] if len(halves) == 2 else node["halves"]):
            io.half(g, half)
    gpu_buses, nics = io.gpu_buses, io.nics
    if len(gpu_buses) != 8 or len(nics) != 2:
        raise Fail("internal: %s has %d GPUs and %d NICs"
                   % (node["name"], len(gpu_buses), len(nics)))
    # Top-level elements other than objects (support, cpukinds, NUMA
    # distances) stay; distances between other objects would name objects
    # this file no longer has.
    for c in m.top:
        if c.tag == "object":
            continue
        if c.tag.startswith("distances") and c.get("type") != "NUMANode":
            continue
        top.append(copy.deepcopy(c))
    if hasattr(ET, "indent"):
        ET.indent(top, space="  ")
    text = ('<?xml version="1.0" encoding="UTF-8"?>\n'
            '<!DOCTYPE topology SYSTEM "hwloc2.dtd">\n'
            + ET.tostring(top, encoding="unicode") + "\n")
    # GPU i is the i-th in bus order (nvidia-smi's order); its half is the
    # host bridge it sits under.
    gpus = []
    io_half = {}
    for hi, half in enumerate(node["halves"]):
        for _, bus in endpoints(half["ports"]):
            io_half[bus] = hi
    for i, bus in enumerate(sorted(gpu_buses)):
        h = io_half[bus]  # its host bridge, hence its NIC
        c = h if len(halves) == 2 else 0  # its Group, hence its CPUs
        gpus.append(dict(index=i, bus_id=nvml_busid(bus),
                         uuid=uuid_of(node, i), cpus=fmt_list(half_cpus[c]),
                         nearest_nic=nics[h]["name"]))
    return text, gpus, nics, [fmt_list(c) for c in half_cpus]


def build_nvml(node, gpus):
    gm = node["gpu"]
    out = ["# Fake NVML for node %s, written by tests/tools/cluster_fixtures.py"
           % node["name"],
           "# with %s.xml (same bus ids); no NVML NUMA id, as on x86." % node["name"],
           "driver 550.54.15"]
    if gm["mig"]:
        out.append(H100_PROFILES.rstrip("\n"))
    for g in gpus:
        i = g["index"]
        out.append("")
        out.append("gpu %s" % g["bus_id"])
        out.append("name %s" % gm["name"])
        out.append("uuid %s" % g["uuid"])
        out.append("pci_device_id %s" % gm["device_id"])
        out.append("memory_total_mib %d" % gm["memory_mib"])
        out.append("cpu_affinity %s" % g["cpus"])
        if gm["mig"]:
            on = 1 if i in node["mig"] else 0
            out.append("mig %d %d" % (on, on))
            out.append("gi_profiles h100")
            for pid, start in node["mig"].get(i, []):
                out.append("gi %d %d" % (pid, start))
        if node["nvlink"]:
            out.append("nvlinks 18")
            link = 0
            for sw, n in zip(NVSWITCH_BUSES, NVLINKS_PER_SWITCH):
                for _ in range(n):
                    out.append("nvlink %d 1 switch %s" % (link, nvml_busid(sw)))
                    link += 1
    return "\n".join(out) + "\n"


def main(argv):
    ap = argparse.ArgumentParser(prog=PROG, description=__doc__.split("\n")[0])
    ap.add_argument("--out", required=True, help="directory to write into")
    ap.add_argument("--lstopo", metavar="FILE",
                    help="an lstopo --of xml recording of this machine "
                         "(default: run lstopo-no-graphics)")
    ap.add_argument("--sockets", action="store_true",
                    help="each half an hwloc Package (a 2-socket node) "
                         "instead of a Group")
    a = ap.parse_args(argv)
    try:
        m = Machine(record(a.lstopo), a.lstopo or "lstopo-no-graphics --of xml")
        os.makedirs(a.out, exist_ok=True)
        manifest = dict(pus=fmt_list(sorted(m.pus)), sockets=a.sockets,
                        numa=fmt_list(int(n.get("os_index")) for n in m.numa),
                        nodes=[])
        for node in NODES:
            text, gpus, nics, halves = build_xml(m, node, a.sockets)
            for g in gpus:
                mig = node["mig"].get(g["index"])
                if mig:
                    # the MIG device UUIDs the fake gives (fake_nvml.c:
                    # GPU index, then instance ids from 1 in fixture order)
                    g["mig"] = [dict(profile=PROFILE_NAMES[p], profile_id=p,
                                     start=s, gpu_instance_id=k + 1,
                                     uuid="MIG-fa4e0000-%04x-4000-8000-%012x"
                                     % (g["index"], k + 1))
                                for k, (p, s) in enumerate(mig)]
            with open(os.path.join(a.out, node["name"] + ".xml"), "w") as f:
                f.write(text)
            with open(os.path.join(a.out, node["name"] + ".nvml"), "w") as f:
                f.write(build_nvml(node, gpus))
            manifest["nodes"].append(dict(
                name=node["name"], model=node["gpu"]["name"],
                nvlink=node["nvlink"], halves=halves, gpus=gpus, nics=nics))
        with open(os.path.join(a.out, "cluster.json"), "w") as f:
            json.dump(manifest, f, indent=2)
            f.write("\n")
    except Fail as e:
        print("%s: %s" % (PROG, e), file=sys.stderr)
        return e.code
    except OSError as e:
        print("%s: cannot write into '%s': %s" % (PROG, a.out, e.strerror),
              file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
