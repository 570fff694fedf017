/*
 * link.c - classify the connection between two devices of a node.
 *
 * The PCIe walk: find the lowest common ancestor C of the two PCI objects.
 *   - no common ancestor: different host bridges.  Same NUMA node set on
 *     both sides -> NODE, otherwise SYS (so sub-NUMA clustering gives SYS
 *     within a socket, as nvidia-smi prints).
 *   - C is a host bridge -> PHB.
 *   - otherwise count the bridges strictly between each device and C; at
 *     most one on each side means both hang off one switch (its upstream
 *     port is C, the downstream ports are the single bridge) -> PIX,
 *     else PXB.
 * This reproduces NVIDIA's published DGX-2 matrix and the DGX A100 one
 * (reference/topology.md 1.6).  hwloc's own common-ancestor helper is
 * unusable on I/O objects (negative depths), hence the walk over parents.
 */
#include <stdio.h>

#include <gpufleet/link.h>

#include "util/fmt.h"

#define MAX_DEPTH 64

static int chain(const struct gf_node *n, int i, int *out)
{
	int len = 0;
	while (i >= 0 && len < MAX_DEPTH) {
		out[len++] = i;
		i = n->pci[i].parent;
	}
	return len;
}

static bool same_mems(const struct gf_node *n, int ra, int rb)
{
	const struct gf_locality *la = &n->locs[n->pci[ra].loc];
	const struct gf_locality *lb = &n->locs[n->pci[rb].loc];
	return gf_bitmap_equal(&la->mems, &lb->mems);
}

enum gf_link_class gf_link_pcie(const struct gf_node *n, int pci_a, int pci_b)
{
	if (pci_a == pci_b)
		return GF_LINK_PIX; /* two ports of one function */
	int ca[MAX_DEPTH], cb[MAX_DEPTH];
	int la = chain(n, pci_a, ca), lb = chain(n, pci_b, cb);
	for (int j = 1; j < lb; j++) {
		for (int i = 1; i < la; i++) {
			if (ca[i] != cb[j])
				continue;
			/* ca[i] == cb[j] is the lowest common ancestor. */
			if (n->pci[ca[i]].kind == GF_PCI_HOSTBRIDGE)
				return GF_LINK_PHB;
			int da = i - 1, db = j - 1;
			return (da <= 1 && db <= 1) ? GF_LINK_PIX : GF_LINK_PXB;
		}
	}
	return same_mems(n, ca[la - 1], cb[lb - 1]) ? GF_LINK_NODE
						    : GF_LINK_SYS;
}

static int dev_pci(const struct gf_node *n, int dev)
{
	if (dev < n->ngpus)
		return n->gpus[dev].pci;
	return n->nics[dev - n->ngpus].pci;
}

struct gf_link gf_link_between(const struct gf_node *n, int dev_a, int dev_b,
			       bool pcie_only)
{
	struct gf_link l = { GF_LINK_X, 0 };
	if (dev_a == dev_b)
		return l;
	if (!pcie_only && dev_a < n->ngpus && dev_b < n->ngpus) {
		int nv = gf_node_nvlinks(n, dev_a, dev_b);
		if (nv > 0) {
			l.cls = GF_LINK_NV;
			l.nvlinks = nv;
			return l;
		}
	}
	l.cls = gf_link_pcie(n, dev_pci(n, dev_a), dev_pci(n, dev_b));
	return l;
}

const char *gf_link_class_name(enum gf_link_class c)
{
	static const char *const names[] = { "X",   "NV",   "PIX", "PXB",
					     "PHB", "NODE", "SYS" };
	if ((unsigned)c >= sizeof(names) / sizeof(names[0]))
		return "?";
	return names[c];
}

void gf_link_format(struct gf_link l, char *out, unsigned size)
{
	if (l.cls == GF_LINK_X)
		gf_note(out, size, " X ");
	else if (l.cls == GF_LINK_NV)
		gf_note(out, size, "NV%d", l.nvlinks);
	else
		gf_note(out, size, "%s", gf_link_class_name(l.cls));
}

enum gf_link_class gf_link_gpu_best_nic(const struct gf_node *n, int g)
{
	enum gf_link_class best = GF_LINK_SYS;
	for (int i = 0; i < n->nnics; i++) {
		enum gf_link_class c =
			gf_link_pcie(n, n->gpus[g].pci, n->nics[i].pci);
		if (c < best)
			best = c;
	}
	return best;
}

int gf_link_gpu_nearest_nics(const struct gf_node *n, int g, int *out, int max)
{
	if (n->nnics == 0)
		return 0;
	enum gf_link_class best = gf_link_gpu_best_nic(n, g);
	int k = 0;
	for (int i = 0; i < n->nnics && k < max; i++)
		if (gf_link_pcie(n, n->gpus[g].pci, n->nics[i].pci) == best)
			out[k++] = i;
	return k;
}
