/*
 * node.c - building and checking the node model.
 *
 * Invariants (checked by gf_node_check):
 *  - every PCI object's parent is -1 (host bridge) or an earlier index
 *    whose kind is not DEVICE; host bridges have a valid locality;
 *  - every GPU and NIC points at a DEVICE object;
 *  - after gf_node_finish GPUs are in PCI bus order, NICs in name order;
 *  - nvlinks[][] is symmetric with a zero diagonal.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <gpufleet/err.h>
#include <gpufleet/node.h>

#include "util/fmt.h"
#include "util/mem.h"

void gf_node_init(struct gf_node *n)
{
	memset(n, 0, sizeof(*n));
	for (int i = 0; i < GF_BITMAP_BITS; i++) {
		n->pu_core[i] = -1;
		n->pu_package[i] = -1;
	}
}

void gf_node_release(struct gf_node *n)
{
	gf_free(n->locs);
	gf_free(n->pci);
	n->nlocs = 0;
	n->npci = 0;
}

struct gf_node *gf_node_new(void)
{
	struct gf_node *n = gf_malloc(sizeof(*n));
	gf_node_init(n);
	return n;
}

void gf_node_free(struct gf_node *n)
{
	if (n == NULL)
		return;
	gf_node_release(n);
	gf_free(n);
}

int gf_node_add_loc(struct gf_node *n, const struct gf_locality *loc)
{
	if (n->nlocs >= GF_MAX_LOCS)
		return GF_ETOOBIG;
	n->locs = gf_reallocarray(n->locs, (size_t)n->nlocs + 1,
				  sizeof(*n->locs));
	n->locs[n->nlocs] = *loc;
	return n->nlocs++;
}

int gf_node_add_pci(struct gf_node *n, const struct gf_pci_obj *obj)
{
	if (n->npci >= GF_MAX_PCI)
		return GF_ETOOBIG;
	if ((n->npci & (n->npci - 1)) == 0) /* grow at powers of two */
		n->pci = gf_reallocarray(n->pci,
					 n->npci ? (size_t)n->npci * 2 : 16,
					 sizeof(*n->pci));
	n->pci[n->npci] = *obj;
	return n->npci++;
}

/* Item (size bytes) into the next of the max slots at base, *count of
 * them taken: its index, or GF_ETOOBIG when all are. */
static int put(void *base, int *count, int max, const void *item, size_t size)
{
	if (*count >= max)
		return GF_ETOOBIG;
	memcpy((char *)base + (size_t)*count * size, item, size);
	return (*count)++;
}

int gf_node_add_numa(struct gf_node *n, const struct gf_numa *numa)
{
	return put(n->numa, &n->nnuma, GF_MAX_NUMA, numa, sizeof(n->numa[0]));
}

int gf_node_add_gpu(struct gf_node *n, const struct gf_gpu *gpu)
{
	return put(n->gpus, &n->ngpus, GF_MAX_GPUS, gpu, sizeof(n->gpus[0]));
}

int gf_node_add_nic(struct gf_node *n, const struct gf_nic *nic)
{
	return put(n->nics, &n->nnics, GF_MAX_NICS, nic, sizeof(n->nics[0]));
}

void gf_node_note(struct gf_node *n, const char *fmt, ...)
{
	if (n->nnotes >= GF_MAX_NOTES)
		return;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(n->notes[n->nnotes], sizeof(n->notes[0]), fmt, ap);
	va_end(ap);
	n->nnotes++;
}

int gf_node_pci_root(const struct gf_node *n, int i)
{
	int guard = 0;
	while (i >= 0 && n->pci[i].parent >= 0 && guard++ < n->npci)
		i = n->pci[i].parent;
	return i;
}

static uint64_t pci_key(const struct gf_pci_obj *o)
{
	return (uint64_t)o->domain << 24 | (uint64_t)o->bus << 16 |
	       (uint64_t)o->dev << 8 | o->func;
}

/* qsort has no context argument: the node being sorted is passed here. */
static _Thread_local const struct gf_node *sort_node;

static int cmp_gpu(const void *a, const void *b)
{
	const struct gf_gpu *x = a, *y = b;
	uint64_t kx = pci_key(&sort_node->pci[x->pci]);
	uint64_t ky = pci_key(&sort_node->pci[y->pci]);
	return kx < ky ? -1 : kx > ky;
}

/* Natural order: "mlx5_2" < "mlx5_10". */
static int natural_cmp(const char *a, const char *b)
{
	while (*a && *b) {
		if (*a >= '0' && *a <= '9' && *b >= '0' && *b <= '9') {
			char *ea, *eb;
			unsigned long va = strtoul(a, &ea, 10);
			unsigned long vb = strtoul(b, &eb, 10);
			if (va != vb)
				return va < vb ? -1 : 1;
			a = ea;
			b = eb;
			continue;
		}
		if (*a != *b)
			return (unsigned char)*a - (unsigned char)*b;
		a++;
		b++;
	}
	return (unsigned char)*a - (unsigned char)*b;
}

static int cmp_nic(const void *a, const void *b)
{
	const struct gf_nic *x = a, *y = b;
	return natural_cmp(x->name, y->name);
}

/* What a GPU or NIC on PCI object pci takes from it: its root's
 * locality and its bus id. */
static void fill_device(const struct gf_node *n, int pci,
			struct gf_bitmap *cpus, struct gf_bitmap *mems,
			bool *known, char *bus_id, unsigned size)
{
	int root = gf_node_pci_root(n, pci);
	const struct gf_locality *l = &n->locs[n->pci[root].loc];
	*cpus = l->cpus;
	*mems = l->mems;
	*known = l->known;
	gf_pci_format_busid(&n->pci[pci], bus_id, size);
}

void gf_node_finish(struct gf_node *n)
{
	sort_node = n;
	qsort(n->gpus, (size_t)n->ngpus, sizeof(n->gpus[0]), cmp_gpu);
	qsort(n->nics, (size_t)n->nnics, sizeof(n->nics[0]), cmp_nic);
	sort_node = NULL;
	for (int i = 0; i < n->ngpus; i++) {
		struct gf_gpu *g = &n->gpus[i];
		fill_device(n, g->pci, &g->cpus, &g->mems, &g->locality_known,
			    g->bus_id, sizeof(g->bus_id));
	}
	for (int i = 0; i < n->nnics; i++) {
		struct gf_nic *c = &n->nics[i];
		fill_device(n, c->pci, &c->cpus, &c->mems, &c->locality_known,
			    c->bus_id, sizeof(c->bus_id));
	}
}

int gf_node_gpu_by_pci(const struct gf_node *n, int pci)
{
	for (int i = 0; i < n->ngpus; i++)
		if (n->gpus[i].pci == pci)
			return i;
	return -1;
}

int gf_node_gpu_by_busid(const struct gf_node *n, const char *bus_id)
{
	uint16_t d;
	uint8_t b, dv, f;
	if (gf_pci_parse_busid(bus_id, &d, &b, &dv, &f) != 0)
		return -1;
	for (int i = 0; i < n->ngpus; i++) {
		const struct gf_pci_obj *o = &n->pci[n->gpus[i].pci];
		if (o->domain == d && o->bus == b && o->dev == dv &&
		    o->func == f)
			return i;
	}
	return -1;
}

int gf_node_nvlinks(const struct gf_node *n, int a, int b)
{
	if (a == b || a < 0 || b < 0 || a >= n->ngpus || b >= n->ngpus)
		return 0;
	int links = n->nvlinks[a][b];
	int sa = n->nvswitch_links[a], sb = n->nvswitch_links[b];
	/* Through the NVSwitch fabric a pair gets the narrower side. */
	if (sa && sb)
		links += sa < sb ? sa : sb;
	return links;
}

void gf_pci_format_busid(const struct gf_pci_obj *o, char *out, unsigned size)
{
	gf_note(out, size, "%04x:%02x:%02x.%x", o->domain, o->bus, o->dev,
		o->func);
}

int gf_pci_parse_busid(const char *s, uint16_t *domain, uint8_t *bus,
		       uint8_t *dev, uint8_t *func)
{
	unsigned long v[4];
	int nv = 0;
	const char *p = s;
	while (nv < 4) {
		char *end;
		if (!((*p >= '0' && *p <= '9') || (*p >= 'a' && *p <= 'f') ||
		      (*p >= 'A' && *p <= 'F')))
			return GF_EPARSE;
		v[nv++] = strtoul(p, &end, 16);
		p = end;
		if (*p == '\0')
			break;
		if (*p != ':' && *p != '.')
			return GF_EPARSE;
		if (*p == '.' && nv < 2)
			return GF_EPARSE;
		p++;
	}
	if (*p != '\0')
		return GF_EPARSE;
	unsigned long dom = 0, b, d, f;
	if (nv == 4) {
		dom = v[0], b = v[1], d = v[2], f = v[3];
	} else if (nv == 3) {
		b = v[0], d = v[1], f = v[2];
	} else {
		return GF_EPARSE;
	}
	if (dom > 0xffff || b > 0xff || d > 0x1f || f > 7)
		return GF_ERANGE;
	*domain = (uint16_t)dom;
	*bus = (uint8_t)b;
	*dev = (uint8_t)d;
	*func = (uint8_t)f;
	return 0;
}

/* GPU or NIC i (what) sits on PCI object p: 0, or GF_EINVAL unless p is
 * a DEVICE. */
static int on_device(const struct gf_node *n, int p, const char *what, int i,
		     char *msg, unsigned size)
{
	if (p >= 0 && p < n->npci && n->pci[p].kind == GF_PCI_DEVICE)
		return 0;
	gf_note(msg, size, "%s %d not on a PCI device", what, i);
	return GF_EINVAL;
}

int gf_node_check(const struct gf_node *n, char *msg, unsigned size)
{
	for (int i = 0; i < n->npci; i++) {
		const struct gf_pci_obj *o = &n->pci[i];
		if (o->parent >= i) {
			gf_note(msg, size, "pci[%d] parent %d not earlier", i,
				o->parent);
			return GF_EINVAL;
		}
		if (o->parent >= 0 && n->pci[o->parent].kind == GF_PCI_DEVICE) {
			gf_note(msg, size, "pci[%d] parent is a device", i);
			return GF_EINVAL;
		}
		if (o->parent < 0 && (o->kind != GF_PCI_HOSTBRIDGE ||
				      o->loc < 0 || o->loc >= n->nlocs)) {
			gf_note(msg, size, "pci[%d] root without locality", i);
			return GF_EINVAL;
		}
	}
	for (int i = 0; i < n->ngpus; i++) {
		int p = n->gpus[i].pci;
		int rc = on_device(n, p, "gpu", i, msg, size);
		if (rc)
			return rc;
		if (i > 0 && pci_key(&n->pci[n->gpus[i - 1].pci]) >=
				     pci_key(&n->pci[p])) {
			gf_note(msg, size, "gpu %d out of bus order", i);
			return GF_EINVAL;
		}
		if (n->nvlinks[i][i] != 0) {
			gf_note(msg, size, "gpu %d nvlinks to itself", i);
			return GF_EINVAL;
		}
		for (int j = 0; j < n->ngpus; j++) {
			if (n->nvlinks[i][j] != n->nvlinks[j][i]) {
				gf_note(msg, size,
					"nvlinks %d-%d not symmetric", i, j);
				return GF_EINVAL;
			}
		}
	}
	for (int i = 0; i < n->nnics; i++) {
		int rc = on_device(n, n->nics[i].pci, "nic", i, msg, size);
		if (rc)
			return rc;
		if (i > 0 &&
		    natural_cmp(n->nics[i - 1].name, n->nics[i].name) > 0) {
			gf_note(msg, size, "nic %d out of name order", i);
			return GF_EINVAL;
		}
	}
	if (size)
		msg[0] = '\0';
	return 0;
}
