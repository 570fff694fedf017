/*
 * template.c - built-in node layouts.
 *
 * A template is a few numbers: sockets, cores per socket, threads, GPU
 * model, how many PCIe switches per socket, and which devices sit under
 * each switch.  The builder lays the PCI tree out the way such servers
 * are wired: host bridge -> root port -> switch upstream port ->
 * downstream ports -> endpoints, so the classifier in link.c sees the same
 * shapes it sees on real exports.
 */
#include <stdio.h>
#include <string.h>

#include <gpufleet/template.h>

#include "util/fmt.h"

struct tmpl {
	const char *name;
	const char *summary;
	const char *gpu_model; /* catalog id */
	int sockets;
	int cores_per_socket;
	int threads;
	int switches_per_socket;
	int gpus_per_switch;
	int nics_per_switch; /* RDMA NICs beside the GPUs */
	int nic_sockets;     /* NICs only on the first N sockets */
	int nvswitch_links;  /* 0: no NVLink */
	int nvlink_bridge;   /* links between GPU pairs 2k, 2k+1 */
	uint64_t mem_per_socket_gib;
};

static const struct tmpl tmpls[] = {
	{ "hgx-h100",
	  "8x H100 SXM, NVSwitch, 2 sockets x 56 cores, one 400G NIC per GPU "
	  "on its PCIe switch",
	  "h100-sxm", 2, 56, 2, 4, 1, 1, 2, 18, 0, 1024 },
	{ "pcie-l40s",
	  "8x L40S PCIe, no NVLink, 2 sockets x 32 cores, 2 NICs on socket 0 "
	  "only",
	  "l40s", 2, 32, 2, 2, 2, 1, 1, 0, 0, 512 },
	{ "h100-nvl",
	  "4x H100 NVL in bridged pairs, 1 socket x 64 cores, 2 NICs",
	  "h100-nvl", 1, 64, 2, 2, 2, 1, 1, 0, 12, 768 },
};

#define NTMPL ((int)(sizeof(tmpls) / sizeof(tmpls[0])))

int gf_template_count(void)
{
	return NTMPL;
}

const char *gf_template_name(int i)
{
	return i >= 0 && i < NTMPL ? tmpls[i].name : NULL;
}

const char *gf_template_summary(int i)
{
	return i >= 0 && i < NTMPL ? tmpls[i].summary : NULL;
}

static int add(struct gf_node *n, int parent, enum gf_pci_kind kind, int bus,
	       uint16_t vendor, uint16_t device, uint16_t cls)
{
	struct gf_pci_obj o;
	memset(&o, 0, sizeof(o));
	o.parent = parent;
	o.loc = -1;
	o.kind = kind;
	o.bus = (uint8_t)bus;
	o.vendor_id = vendor;
	o.device_id = device;
	o.class_id = cls;
	return gf_node_add_pci(n, &o);
}

static int build(const struct tmpl *t, struct gf_node *n)
{
	const struct gf_gpu_model *m = gf_catalog_by_id(t->gpu_model);
	int threads = t->threads;
	int ncpu_sock = t->cores_per_socket * threads;
	int ncores = t->cores_per_socket * t->sockets;
	int gpu_no = 0, nic_no = 0;
	if (m == NULL || ncpu_sock * t->sockets > GF_BITMAP_BITS)
		return GF_EINVAL;
	gf_note(n->hostname, sizeof(n->hostname), "%s-template", t->name);
	gf_note(n->source, sizeof(n->source), "template:%s", t->name);
	for (int s = 0; s < t->sockets; s++) {
		struct gf_numa numa = { .os_index = s,
					.memory_bytes = t->mem_per_socket_gib
							<< 30 };
		struct gf_locality loc = { .known = true };
		gf_bitmap_zero(&numa.cpus);
		/* Linux numbering: first threads of all cores, then the
		 * second threads (cpu c and c + ncores are siblings). */
		for (int c = 0; c < t->cores_per_socket; c++) {
			int core = s * t->cores_per_socket + c;
			for (int h = 0; h < threads; h++) {
				int pu = core + h * ncores;
				gf_bitmap_set(&numa.cpus, pu);
				gf_bitmap_set(&n->cpus, pu);
				n->pu_core[pu] = (int16_t)core;
				n->pu_package[pu] = (int16_t)s;
			}
		}
		loc.cpus = numa.cpus;
		gf_bitmap_zero(&loc.mems);
		gf_bitmap_set(&loc.mems, s);
		if (gf_node_add_numa(n, &numa) < 0)
			return GF_ETOOBIG;
		int li = gf_node_add_loc(n, &loc);
		if (li < 0)
			return GF_ETOOBIG;
		for (int w = 0; w < t->switches_per_socket; w++) {
			int bus =
				0x10 + (s * t->switches_per_socket + w) * 0x20;
			struct gf_pci_obj hb;
			memset(&hb, 0, sizeof(hb));
			hb.parent = -1;
			hb.loc = li;
			hb.kind = GF_PCI_HOSTBRIDGE;
			int h = gf_node_add_pci(n, &hb);
			int rp = add(n, h, GF_PCI_BRIDGE, bus, 0x8086, 0x352a,
				     0x0604);
			int up = add(n, rp, GF_PCI_BRIDGE, bus + 1, 0x1000,
				     0xc030, 0x0604);
			int slot = 0;
			for (int g = 0; g < t->gpus_per_switch; g++) {
				int dn = add(n, up, GF_PCI_BRIDGE, bus + 2,
					     0x1000, 0xc030, 0x0604);
				int d = add(n, dn, GF_PCI_DEVICE,
					    bus + 3 + slot++, 0x10de,
					    m->pci_device_ids[0], 0x0302);
				if (h < 0 || rp < 0 || up < 0 || dn < 0 ||
				    d < 0)
					return GF_ETOOBIG;
				struct gf_gpu gpu;
				memset(&gpu, 0, sizeof(gpu));
				gpu.pci = d;
				gpu.model = m;
				gpu.mig_mode = -1;
				gpu.mig_pending = -1;
				gpu.numa_id = -1;
				gpu.memory_mib = m->memory_mib;
				gf_note(gpu.name, sizeof(gpu.name), "%s",
					m->name);
				gf_note(gpu.osdev, sizeof(gpu.osdev), "nvml%d",
					gpu_no++);
				if (gf_node_add_gpu(n, &gpu) < 0)
					return GF_ETOOBIG;
			}
			for (int k = 0;
			     s < t->nic_sockets && k < t->nics_per_switch;
			     k++) {
				int dn = add(n, up, GF_PCI_BRIDGE, bus + 2,
					     0x1000, 0xc030, 0x0604);
				int d = add(n, dn, GF_PCI_DEVICE,
					    bus + 3 + slot++, 0x15b3, 0x1021,
					    0x0207);
				if (dn < 0 || d < 0)
					return GF_ETOOBIG;
				struct gf_nic nic;
				memset(&nic, 0, sizeof(nic));
				nic.pci = d;
				nic.rdma = true;
				gf_note(nic.name, sizeof(nic.name), "mlx5_%d",
					nic_no);
				gf_note(nic.netdev, sizeof(nic.netdev),
					"ibp%ds0", bus + 3 + slot - 1);
				nic_no++;
				if (gf_node_add_nic(n, &nic) < 0)
					return GF_ETOOBIG;
			}
		}
	}
	gf_node_finish(n);
	if (t->nvswitch_links || t->nvlink_bridge)
		n->nvlink_known = true;
	for (int g = 0; g < n->ngpus; g++) {
		n->nvswitch_links[g] = (uint8_t)t->nvswitch_links;
		if (t->nvlink_bridge && (g ^ 1) < n->ngpus)
			n->nvlinks[g][g ^ 1] = (uint8_t)t->nvlink_bridge;
	}
	return 0;
}

int gf_template_build(const char *name, struct gf_node *n, struct gf_err *e)
{
	for (int i = 0; i < NTMPL; i++) {
		if (strcmp(name, tmpls[i].name) != 0)
			continue;
		int rc = build(&tmpls[i], n);
		if (rc)
			return gf_err_set(e, rc, "cannot build template '%s'",
					  name);
		return 0;
	}
	char known[256] = "";
	size_t len = 0;
	for (int i = 0; i < NTMPL; i++)
		len += (size_t)snprintf(known + len, sizeof(known) - len,
					"%s%s", i ? ", " : "", tmpls[i].name);
	return gf_err_set(e, GF_ENOTFOUND, "unknown template '%s' (known: %s)",
			  name, known);
}
