/*
 * findings.c - topology advice.  Each rule is a function that appends at
 * most one finding; the thresholds follow NCCL's defaults (GPUDirect RDMA
 * and P2P used up to PXB) and the measured costs in
 * reference/topology.md section 5.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include <gpufleet/findings.h>
#include <gpufleet/link.h>

#include "util/fmt.h"

struct acc {
	struct gf_finding *out;
	int max;
	int n;
};

__attribute__((format(printf, 4, 5))) static void
add(struct acc *a, enum gf_severity sev, const char *code, const char *fmt, ...)
{
	if (a->n >= a->max)
		return;
	struct gf_finding *f = &a->out[a->n++];
	f->sev = sev;
	gf_note(f->code, sizeof(f->code), "%s", code);
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(f->msg, sizeof(f->msg), fmt, ap);
	va_end(ap);
}

static void gpu_list(const struct gf_bitmap *set, char *out, size_t size)
{
	char tmp[256];
	gf_bitmap_format_list(set, tmp, sizeof(tmp));
	gf_note(out, size, "GPU%s", tmp);
}

/* RDMA without an InfiniBand verbs device: HPE Slingshot (Cray, 0x17db)
 * goes through libfabric's CXI provider, so hwloc shows a plain netdev. */
static bool rdma_capable(const struct gf_node *n, int i)
{
	return n->nics[i].rdma || n->pci[n->nics[i].pci].vendor_id == 0x17db;
}

/* The best PCIe class from GPU g to an RDMA-capable NIC. */
static enum gf_link_class best_rdma_nic(const struct gf_node *n, int g)
{
	enum gf_link_class best = GF_LINK_SYS;
	for (int i = 0; i < n->nnics; i++) {
		if (!rdma_capable(n, i))
			continue;
		enum gf_link_class c =
			gf_link_pcie(n, n->gpus[g].pci, n->nics[i].pci);
		if (c < best)
			best = c;
	}
	return best;
}

static void rule_nic_distance(const struct gf_node *n, struct acc *a)
{
	if (n->nnics == 0) {
		add(a, GF_SEV_INFO, "no-nic",
		    "no RDMA or network NIC found on the PCI tree: multi-node "
		    "jobs cannot use GPUDirect RDMA");
		return;
	}
	int rdma = 0;
	char names[200] = "";
	size_t nl = 0;
	for (int i = 0; i < n->nnics; i++) {
		if (rdma_capable(n, i))
			rdma++;
		else if (nl + 40 < sizeof(names))
			nl += (size_t)snprintf(names + nl, sizeof(names) - nl,
					       "%s%s", nl ? ", " : "",
					       n->nics[i].name);
	}
	if (rdma == 0) {
		/* GPUDirect levels mean nothing without RDMA: say what the
		 * node really offers */
		add(a, GF_SEV_INFO, "nic-no-rdma",
		    "no RDMA NIC (only %s): no GPUDirect RDMA at all; "
		    "multi-node jobs move data through host memory over TCP "
		    "sockets, at a fraction of InfiniBand or RoCE bandwidth; "
		    "keep jobs that need it within one node",
		    names);
		return;
	}
	struct gf_bitmap sys, far;
	gf_bitmap_zero(&sys);
	gf_bitmap_zero(&far);
	for (int g = 0; g < n->ngpus; g++) {
		enum gf_link_class c = best_rdma_nic(n, g);
		if (c == GF_LINK_SYS)
			gf_bitmap_set(&sys, g);
		else if (c > GF_LINK_PXB)
			gf_bitmap_set(&far, g);
	}
	char list[300];
	if (!gf_bitmap_is_empty(&sys)) {
		gpu_list(&sys, list, sizeof(list));
		add(a, GF_SEV_WARN, "nic-sys",
		    "%s: nearest RDMA NIC is SYS (across the CPU "
		    "interconnect): NCCL turns GPUDirect RDMA off for them, "
		    "expect about half the network bandwidth; give their "
		    "multi-node jobs GPUs on the NIC's socket",
		    list);
	}
	if (!gf_bitmap_is_empty(&far)) {
		gpu_list(&far, list, sizeof(list));
		add(a, GF_SEV_WARN, "nic-far",
		    "%s: nearest RDMA NIC is beyond a PCIe switch (PHB or "
		    "NODE): NCCL uses GPUDirect RDMA only up to PXB by default "
		    "(NCCL_NET_GDR_LEVEL)",
		    list);
	}
}

static int numa_with_cpus(const struct gf_node *n)
{
	int k = 0;
	for (int i = 0; i < n->nnuma; i++)
		if (!gf_bitmap_is_empty(&n->numa[i].cpus))
			k++;
	return k;
}

static void rule_gpu_numa(const struct gf_node *n, struct acc *a)
{
	if (numa_with_cpus(n) < 2)
		return;
	struct gf_bitmap mems, all_mems, rest, rest_cpus;
	gf_bitmap_zero(&mems);
	gf_bitmap_zero(&all_mems);
	gf_bitmap_zero(&rest_cpus);
	for (int g = 0; g < n->ngpus; g++) {
		if (!n->gpus[g].locality_known)
			return;
		gf_bitmap_or(&mems, &n->gpus[g].mems);
	}
	for (int i = 0; i < n->nnuma; i++)
		if (!gf_bitmap_is_empty(&n->numa[i].cpus)) {
			gf_bitmap_set(&all_mems, n->numa[i].os_index);
			if (!gf_bitmap_isset(&mems, n->numa[i].os_index))
				gf_bitmap_or(&rest_cpus, &n->numa[i].cpus);
		}
	rest = all_mems;
	for (int i = 0; i < GF_BITMAP_WORDS; i++)
		rest.w[i] &= ~mems.w[i];
	if (gf_bitmap_is_empty(&rest))
		return;
	char ml[128], rl[128], cl[256];
	gf_bitmap_format_list(&mems, ml, sizeof(ml));
	gf_bitmap_format_list(&rest, rl, sizeof(rl));
	gf_bitmap_format_list(&rest_cpus, cl, sizeof(cl));
	if (gf_bitmap_count(&mems) == 1)
		add(a, GF_SEV_WARN, "gpus-one-socket",
		    "all %d GPUs are local to NUMA node %s; CPUs %s (NUMA %s) "
		    "are remote to every GPU: keep GPU jobs' threads on NUMA "
		    "%s and give the rest to CPU-only work",
		    n->ngpus, ml, cl, rl, ml);
	else
		add(a, GF_SEV_INFO, "numa-without-gpu",
		    "NUMA node %s (CPUs %s) has no GPU: the GPUs are local to "
		    "NUMA %s; give those CPUs to CPU-only work rather than to "
		    "GPU jobs' threads",
		    rl, cl, ml);
}

static void rule_nvlink(const struct gf_node *n, struct acc *a)
{
	if (n->ngpus < 2)
		return;
	for (int i = 0; i < n->ngpus; i++)
		if (n->gpus[i].vendor == GF_VENDOR_AMD) {
			add(a, GF_SEV_INFO, "amd-gpus",
			    "AMD GPUs: their xGMI links are not in nvidia-smi's "
			    "vocabulary; the matrix shows PCIe classes only");
			return;
		}
	int pairs = 0, nv_pairs = 0, sys_pairs = 0;
	int bi = -1, bj = -1;
	enum gf_link_class best = GF_LINK_SYS;
	char missing[300] = "";
	size_t ml = 0;
	int shown = 0;
	for (int i = 0; i < n->ngpus; i++)
		for (int j = i + 1; j < n->ngpus; j++) {
			pairs++;
			struct gf_link l = gf_link_between(n, i, j, false);
			if (l.cls == GF_LINK_NV) {
				nv_pairs++;
				continue;
			}
			if (l.cls == GF_LINK_SYS)
				sys_pairs++;
			if (bi < 0 || l.cls < best) {
				best = l.cls;
				bi = i;
				bj = j;
			}
			if (shown < 6 && ml + 32 < sizeof(missing)) {
				int w = snprintf(
					missing + ml, sizeof(missing) - ml,
					"%sGPU%d-GPU%d (%s)", shown ? ", " : "",
					i, j, gf_link_class_name(l.cls));
				ml += (size_t)w;
				shown++;
			}
		}
	bool capable = false;
	for (int i = 0; i < n->ngpus; i++)
		if (n->gpus[i].model && n->gpus[i].model->nvlink_gen)
			capable = true;
	if (nv_pairs == 0 && !n->nvlink_known && capable) {
		add(a, GF_SEV_INFO, "nvlink-unknown",
		    "these GPUs have NVLink but this source does not say how "
		    "it is wired (no NVML, no NVLinkBandwidth); the matrix "
		    "shows PCIe only");
		return;
	}
	if (nv_pairs == 0) {
		add(a, GF_SEV_WARN, "no-nvlink",
		    "no NVLink between GPUs: multi-GPU jobs go over PCIe; "
		    "best pair GPU%d+GPU%d (%s)%s",
		    bi, bj, gf_link_class_name(best),
		    sys_pairs ? "; pairs across sockets (SYS) are above "
				"NCCL's P2P level and go through host memory"
			      : "");
		return;
	}
	if (nv_pairs < pairs)
		add(a, GF_SEV_WARN, "nvlink-partial",
		    "%d of %d GPU pairs have no NVLink: %s%s; a multi-GPU "
		    "job placed across them falls back to PCIe",
		    pairs - nv_pairs, pairs, missing,
		    pairs - nv_pairs > shown ? ", ..." : "");
}

static void rule_locality(const struct gf_node *n, struct acc *a)
{
	struct gf_bitmap unk;
	gf_bitmap_zero(&unk);
	for (int g = 0; g < n->ngpus; g++)
		if (!n->gpus[g].locality_known)
			gf_bitmap_set(&unk, g);
	if (gf_bitmap_is_empty(&unk))
		return;
	char list[300];
	gpu_list(&unk, list, sizeof(list));
	add(a, GF_SEV_WARN, "locality-unknown",
	    "%s: the firmware reports no PCI locality, so their NUMA node "
	    "is unknown; set HWLOC_PCI_LOCALITY or fix the BIOS (ACPI "
	    "_PXM) before binding",
	    list);
}

int gf_findings_compute(const struct gf_node *n, struct gf_finding *out,
			int max)
{
	struct acc a = { out, max, 0 };
	rule_locality(n, &a);
	rule_nic_distance(n, &a);
	rule_gpu_numa(n, &a);
	rule_nvlink(n, &a);
	/* Stable: warnings first, then the rest in rule order. */
	struct gf_finding tmp;
	for (int i = 1; i < a.n; i++)
		for (int j = i; j > 0 && out[j].sev > out[j - 1].sev; j--) {
			tmp = out[j];
			out[j] = out[j - 1];
			out[j - 1] = tmp;
		}
	return a.n;
}

const char *gf_severity_name(enum gf_severity s)
{
	return s == GF_SEV_WARN ? "warning" : "info";
}
