/*
 * gpu_topo.c - the bridge from the node model to the placement engine's
 * view of a node's GPUs, and the choice of the best connected GPU set.
 *
 * The choice enumerates the k-subsets of the free GPUs (at most C(16,8) =
 * 12,870, each scored over its pairs); nodes whose GPUs are all alike (an
 * NVSwitch board, or a node whose GPUs have no topology) skip it.  It
 * runs once per placement, on the chosen node only.
 */
#include <string.h>

#include <gpufleet/gpu_topo.h>
#include <gpufleet/link.h>
#include <gpufleet/node.h>

static int quality(struct gf_link l)
{
	switch (l.cls) {
	case GF_LINK_NV:
		return GF_GQ_NVLINK + (l.nvlinks < 200 ? l.nvlinks : 200);
	case GF_LINK_PIX:
	case GF_LINK_X:
		return GF_GQ_PIX;
	case GF_LINK_PXB:
		return GF_GQ_PXB;
	case GF_LINK_PHB:
		return GF_GQ_PHB;
	case GF_LINK_NODE:
		return GF_GQ_NODE;
	case GF_LINK_SYS:
		break;
	}
	return GF_GQ_SYS;
}

int gf_gpu_topo_from_node(const struct gf_node *n, struct gf_gpu_topo *t,
			  struct gf_err *e)
{
	memset(t, 0, sizeof(*t));
	if (n->ngpus > GF_GPU_TOPO_MAX)
		return gf_err_set(e, GF_ETOOBIG,
				  "%s: %d GPUs, more than the %d a placement "
				  "node holds",
				  n->source, n->ngpus, GF_GPU_TOPO_MAX);
	t->ngpus = (uint8_t)n->ngpus;
	for (int i = 0; i < n->ngpus; i++) {
		for (int j = 0; j < n->ngpus; j++)
			t->pair[i][j] =
				i == j ? 0
				       : (uint8_t)quality(gf_link_between(
						 n, i, j, false));
		int best = GF_GQ_NONE;
		for (int c = 0; c < n->nnics; c++) {
			if (!n->nics[c].rdma)
				continue;
			int q = quality((struct gf_link){
				gf_link_pcie(n, n->gpus[i].pci, n->nics[c].pci),
				0 });
			if (q > best)
				best = q;
		}
		t->nic[i] = (uint8_t)best;
	}
	t->uniform = true;
	for (int i = 0; i < n->ngpus && t->uniform; i++) {
		t->uniform = t->nic[i] == t->nic[0];
		for (int j = 0; j < n->ngpus && t->uniform; j++)
			t->uniform = i == j || t->pair[i][j] == t->pair[0][1];
	}
	return 0;
}

void gf_gpu_topo_score(const struct gf_gpu_topo *t, const int *gpus, int k,
		       struct gf_gpu_set_score *out)
{
	out->min_pair = k > 1 ? 255 : 0;
	out->min_nic = 255;
	out->sum_pair = 0;
	for (int a = 0; a < k; a++) {
		int q = t->nic[gpus[a]];
		if (q < out->min_nic)
			out->min_nic = q;
		for (int b = a + 1; b < k; b++) {
			q = t->pair[gpus[a]][gpus[b]];
			out->sum_pair += q;
			if (q < out->min_pair)
				out->min_pair = q;
		}
	}
	if (k == 0)
		out->min_nic = 0;
}

/* Whether x beats y in the order of gpu_topo.h. */
static bool better(const struct gf_gpu_set_score *x,
		   const struct gf_gpu_set_score *y, bool multinode)
{
	if (x->min_pair != y->min_pair)
		return x->min_pair > y->min_pair;
	if (multinode && x->min_nic != y->min_nic)
		return x->min_nic > y->min_nic;
	return x->sum_pair > y->sum_pair;
}

int gf_gpu_topo_choose(const struct gf_gpu_topo *t, uint32_t free_mask, int k,
		       bool multinode, int *out)
{
	int idx[GF_GPU_TOPO_MAX], nfree = 0;
	for (int g = 0; g < t->ngpus; g++)
		if (free_mask >> g & 1)
			idx[nfree++] = g;
	if (k <= 0 || nfree < k)
		return k == 0 ? 0 : GF_ENOTFOUND;
	if (t->uniform) {
		for (int i = 0; i < k; i++)
			out[i] = idx[i];
		return 0;
	}
	/* k-subsets of idx[] in lexicographic order: c[] are positions */
	int c[GF_GPU_TOPO_MAX], set[GF_GPU_TOPO_MAX];
	struct gf_gpu_set_score best = { -1, -1, -1 }, cur;
	for (int i = 0; i < k; i++)
		c[i] = i;
	for (;;) {
		for (int i = 0; i < k; i++)
			set[i] = idx[c[i]];
		gf_gpu_topo_score(t, set, k, &cur);
		if (best.min_pair < 0 || better(&cur, &best, multinode)) {
			best = cur;
			memcpy(out, set, (size_t)k * sizeof(*out));
		}
		int i = k - 1;
		while (i >= 0 && c[i] == nfree - k + i)
			i--;
		if (i < 0)
			break;
		c[i]++;
		for (int j = i + 1; j < k; j++)
			c[j] = c[j - 1] + 1;
	}
	return 0;
}
