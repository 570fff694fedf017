/*
 * nccl_xml.c - NCCL topology files into the node model, read with
 * libxml2's tree API (no network, no DTD, no entity expansion).
 *
 * The walk adds one host bridge per <cpu>, a bridge per switch <pci>, a
 * device per endpoint <pci>, then the GPUs and NICs on those devices.
 * NVLink targets name bus ids, which only have final GPU indexes after
 * gf_node_finish(), so links are kept aside and resolved at the end.
 * Every limit of the node model is checked here (GF_ETOOBIG), and every
 * malformed attribute is an error naming the file and line.
 */
#include "topo/nccl_xml.h"

#include <libxml/parser.h>
#include <libxml/tree.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "topo/source.h"
#include "util/dynlib.h"
#include "util/file.h"
#include "util/fmt.h"
#include "util/log.h"
#include "util/mem.h"

/*
 * libxml2, opened the first time a file is read (util/dynlib.h).  xmlFree
 * is a variable (a pointer to libxml2's free): its address is looked up.
 */
#define XML_FUNCS(X)            \
	X(xmlDocGetRootElement) \
	X(xmlFreeDoc)           \
	X(xmlGetLastError)      \
	X(xmlGetLineNo)         \
	X(xmlGetProp)           \
	X(xmlReadMemory)        \
	X(xmlResetLastError)    \
	X(xmlFree)
GF_DYNLIB_DEFINE(xml_lib, xml_fns, "libxml2.so.2", "libxml2", XML_FUNCS);
#define XML(name)	     (GF_DYNLIB_FNS(&xml_lib, xml_fns)->name)
#define xmlDocGetRootElement XML(xmlDocGetRootElement)
#define xmlFreeDoc	     XML(xmlFreeDoc)
#define xmlGetLastError	     XML(xmlGetLastError)
#define xmlGetLineNo	     XML(xmlGetLineNo)
#define xmlGetProp	     XML(xmlGetProp)
#define xmlReadMemory	     XML(xmlReadMemory)
#define xmlResetLastError    XML(xmlResetLastError)
#undef xmlFree
#define xmlFree (*XML(xmlFree))

#define MAX_DEPTH 16 /* nested <pci>: switches of switches */
#define MAX_LINKS 4096

struct pending_link {
	int gpu_pci; /* PCI object of the GPU that lists the link */
	uint16_t domain;
	uint8_t bus, dev, func;
	int count;
	bool to_gpu; /* tclass is a GPU's; otherwise an NVSwitch */
	int line;
};

struct rd {
	struct gf_node *n;
	const char *what;
	struct gf_err *e;
	struct pending_link *links;
	int nlinks;
	int unclassified; /* <pci> endpoints with no class and no child */
	int xgmi;	  /* AMD xGMI links, not modelled */
	bool any_nvlink;
};

/* Attribute `name` of x into buf; false when absent. */
static bool attr(xmlNode *x, const char *name, char *buf, size_t size)
{
	xmlChar *v = xmlGetProp(x, (const xmlChar *)name);
	if (v == NULL)
		return false;
	gf_note(buf, size, "%s", (const char *)v);
	xmlFree(v);
	return true;
}

static bool is(xmlNode *x, const char *name)
{
	return x->type == XML_ELEMENT_NODE &&
	       strcmp((const char *)x->name, name) == 0;
}

static xmlNode *child(xmlNode *x, const char *name)
{
	for (xmlNode *c = x->children; c; c = c->next)
		if (is(c, name))
			return c;
	return NULL;
}

static int bad(struct rd *r, xmlNode *x, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int bad(struct rd *r, xmlNode *x, const char *fmt, ...)
{
	char what[256];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	return gf_err_set(r->e, GF_EPARSE, "%s:%ld: %s", r->what,
			  xmlGetLineNo(x), what);
}

static int toobig(struct rd *r, xmlNode *x, const char *what, int max)
{
	return gf_err_set(r->e, GF_ETOOBIG, "%s:%ld: more than %d %s", r->what,
			  xmlGetLineNo(x), max, what);
}

/* An optional hex attribute ("0x030200"); *out untouched when absent. */
static int hex_attr(struct rd *r, xmlNode *x, const char *name,
		    unsigned long max, unsigned long *out)
{
	char buf[64];
	if (!attr(x, name, buf, sizeof(buf)))
		return 0;
	char *end;
	unsigned long v = strtoul(buf, &end, 16);
	if (end == buf || *end != '\0' || v > max)
		return bad(r, x, "bad %s='%.64s': expected a hex number", name,
			   buf);
	*out = v;
	return 1;
}

/* "00000000,000fffff": 32-bit words, most significant first. */
static int parse_mask(struct rd *r, xmlNode *x, const char *s,
		      struct gf_bitmap *b)
{
	gf_bitmap_zero(b);
	int words = 1;
	for (const char *p = s; *p; p++)
		words += *p == ',';
	int w = words - 1;
	for (const char *p = s; w >= 0; w--) {
		char *end;
		unsigned long v = strtoul(p, &end, 16);
		if (end == p || (*end != ',' && *end != '\0') ||
		    v > 0xffffffffUL)
			return bad(r, x, "bad affinity='%.64s': %s", s,
				   "expected comma-separated 32-bit hex words");
		for (int bit = 0; bit < 32; bit++) {
			if (!(v >> bit & 1))
				continue;
			if (gf_bitmap_set(b, w * 32 + bit) != 0)
				return toobig(r, x, "CPUs", GF_BITMAP_BITS);
		}
		p = *end ? end + 1 : end;
	}
	return 0;
}

static int add_pci(struct rd *r, xmlNode *x, const struct gf_pci_obj *o)
{
	int idx = gf_node_add_pci(r->n, o);
	if (idx < 0)
		return toobig(r, x, "PCI objects", GF_MAX_PCI);
	return idx;
}

static int add_gpu(struct rd *r, xmlNode *x, int pci, unsigned long vendor,
		   unsigned long device)
{
	struct gf_gpu g;
	bool known = gf__topo_gpu_init(&g, pci, vendor, device);
	xmlNode *gx = child(x, "gpu");
	char sm[16] = "";
	if (gx)
		attr(gx, "sm", sm, sizeof(sm));
	if (!known && device) {
		gf_note(g.name, sizeof(g.name), "%s GPU %04lx:%04lx",
			g.vendor == GF_VENDOR_AMD ? "AMD" : "NVIDIA", vendor,
			device);
	} else if (!known) {
		gf_note(g.name, sizeof(g.name), "%s GPU%s%s",
			g.vendor == GF_VENDOR_AMD ? "AMD" : "NVIDIA",
			*sm ? " sm" : "", sm);
	}
	if (gf_node_add_gpu(r->n, &g) < 0)
		return toobig(r, x, "GPUs", GF_MAX_GPUS);
	for (xmlNode *l = gx ? gx->children : NULL; l; l = l->next) {
		if (is(l, "xgmi")) {
			r->xgmi++;
			continue;
		}
		if (!is(l, "nvlink"))
			continue;
		r->any_nvlink = true;
		char target[64], count[16], tclass[32] = "";
		if (!attr(l, "target", target, sizeof(target)) ||
		    !attr(l, "count", count, sizeof(count)))
			return bad(r, l, "<nvlink> without target= or count=");
		attr(l, "tclass", tclass, sizeof(tclass));
		struct pending_link pl = { .gpu_pci = pci,
					   .line = (int)xmlGetLineNo(l) };
		char *end;
		long c = strtol(count, &end, 10);
		if (gf_pci_parse_busid(target, &pl.domain, &pl.bus, &pl.dev,
				       &pl.func) != 0)
			return bad(r, l, "bad target='%.64s': %s", target,
				   "expected a PCI bus id");
		if (end == count || *end || c < 1 || c > 255)
			return bad(r, l, "bad count='%.64s': %s", count,
				   "expected 1 to 255");
		unsigned long tc = strtoul(tclass, NULL, 16);
		pl.count = (int)c;
		pl.to_gpu =
			*tclass == '\0' || tc >> 16 == 0x03 || tc >> 16 == 0x12;
		if (r->nlinks >= MAX_LINKS)
			return toobig(r, l, "NVLink entries", MAX_LINKS);
		r->links = gf_reallocarray(r->links, (size_t)r->nlinks + 1,
					   sizeof(*r->links));
		r->links[r->nlinks++] = pl;
	}
	return 0;
}

/* Whether a NIC is RDMA-capable (GPUDirect RDMA possible). */
static bool rdma_nic(unsigned long cls, unsigned long vendor, const char *name,
		     const char *gdr)
{
	return cls >> 8 == 0x0207 /* InfiniBand */ || vendor == 0x15b3 ||
	       vendor == 0x1d0f /* Amazon EFA */ ||
	       strncmp(name, "mlx5_", 5) == 0 || strcmp(gdr, "1") == 0;
}

static int add_nic(struct rd *r, xmlNode *x, int pci, unsigned long cls,
		   unsigned long vendor, const char *busid)
{
	xmlNode *nx = is(x, "nic") ? x : child(x, "nic");
	int added = 0;
	for (xmlNode *net = nx ? nx->children : NULL; net; net = net->next) {
		if (!is(net, "net"))
			continue;
		struct gf_nic c;
		memset(&c, 0, sizeof(c));
		c.pci = pci;
		char gdr[8] = "";
		if (!attr(net, "name", c.name, sizeof(c.name)))
			return bad(r, net, "<net> without name=");
		attr(net, "gdr", gdr, sizeof(gdr));
		c.rdma = rdma_nic(cls, vendor, c.name, gdr);
		if (!c.rdma)
			gf_note(c.netdev, sizeof(c.netdev), "%s", c.name);
		if (gf_node_add_nic(r->n, &c) < 0)
			return toobig(r, net, "NICs", GF_MAX_NICS);
		added++;
	}
	if (added == 0) { /* a NIC function the file does not name */
		struct gf_nic c;
		memset(&c, 0, sizeof(c));
		c.pci = pci;
		gf_note(c.name, sizeof(c.name), "%s", busid);
		c.rdma = rdma_nic(cls, vendor, "", "");
		if (gf_node_add_nic(r->n, &c) < 0)
			return toobig(r, x, "NICs", GF_MAX_NICS);
	}
	return 0;
}

static int walk_pci(struct rd *r, xmlNode *x, int parent, int depth)
{
	if (depth > MAX_DEPTH)
		return toobig(r, x, "nested <pci> levels", MAX_DEPTH);
	char busid[64];
	if (!attr(x, "busid", busid, sizeof(busid)))
		return bad(r, x, "<pci> without busid=");
	struct gf_pci_obj o = { .parent = parent, .loc = -1 };
	if (gf_pci_parse_busid(busid, &o.domain, &o.bus, &o.dev, &o.func) != 0)
		return bad(r, x, "bad busid='%.64s': %s", busid,
			   "expected a PCI bus id like 0000:18:00.0");
	unsigned long cls = 0, vendor = 0, device = 0;
	int has_class = hex_attr(r, x, "class", 0xffffff, &cls);
	if (has_class < 0 || hex_attr(r, x, "vendor", 0xffff, &vendor) < 0 ||
	    hex_attr(r, x, "device", 0xffff, &device) < 0)
		return r->e->code;
	o.class_id = (uint16_t)(cls >> 8);
	o.vendor_id = (uint16_t)vendor;
	o.device_id = (uint16_t)device;
	bool sub_pci = child(x, "pci") != NULL;
	bool bridge = sub_pci || cls >> 8 == 0x0604;
	o.kind = bridge ? GF_PCI_BRIDGE : GF_PCI_DEVICE;
	int idx = add_pci(r, x, &o);
	if (idx < 0)
		return idx;
	if (bridge) {
		for (xmlNode *c = x->children; c; c = c->next) {
			if (!is(c, "pci"))
				continue;
			int rc = walk_pci(r, c, idx, depth + 1);
			if (rc < 0)
				return rc;
		}
		return 0;
	}
	unsigned base = (unsigned)(cls >> 16);
	if (child(x, "gpu") || base == 0x03 || (base == 0x12 && vendor))
		return add_gpu(r, x, idx, vendor, device);
	if (child(x, "nic") || base == 0x02) {
		char name[16];
		gf_pci_format_busid(&o, name, sizeof(name));
		return add_nic(r, x, idx, cls, vendor, name);
	}
	if (!has_class)
		r->unclassified++;
	return 0;
}

/* A <nic> straight under <cpu>: the file gives no PCI address; it is
 * placed at that CPU's host bridge. */
static int cpu_nic(struct rd *r, xmlNode *x, int hostbridge, int numaid)
{
	struct gf_pci_obj o = { .parent = hostbridge,
				.loc = -1,
				.kind = GF_PCI_DEVICE,
				.domain = 0xffff,
				.bus = 0xff,
				.dev = (uint8_t)(r->n->nnics & 0x1f),
				.class_id = 0x0200 };
	int idx = add_pci(r, x, &o);
	if (idx < 0)
		return idx;
	int before = r->n->nnics;
	int rc = add_nic(r, x, idx, 0x020000, 0, "nic");
	if (rc == 0 && r->n->nnics > before)
		gf_node_note(r->n,
			     "NIC %s has no PCI address in the file; placed at "
			     "NUMA node %d's host bridge",
			     r->n->nics[before].name, numaid);
	return rc;
}

static int walk_cpu(struct rd *r, xmlNode *x)
{
	char buf[64], mask[1024];
	if (!attr(x, "numaid", buf, sizeof(buf)))
		return bad(r, x, "<cpu> without numaid=");
	char *end;
	long numaid = strtol(buf, &end, 10);
	/* -1: NCCL found no NUMA node (a VM): locality unknown */
	if (end == buf || *end || numaid < -1 || numaid >= GF_BITMAP_BITS)
		return bad(r, x, "bad numaid='%.64s': %s", buf,
			   "expected a NUMA node number or -1");
	for (int i = 0; numaid >= 0 && i < r->n->nnuma; i++)
		if (r->n->numa[i].os_index == numaid)
			return bad(r, x, "numaid='%.64s' appears twice", buf);
	struct gf_numa numa = { .os_index = (int)numaid };
	struct gf_locality loc;
	memset(&loc, 0, sizeof(loc));
	if (attr(x, "affinity", mask, sizeof(mask))) {
		int rc = parse_mask(r, x, mask, &numa.cpus);
		if (rc)
			return rc;
		loc.known = numaid >= 0 && !gf_bitmap_is_empty(&numa.cpus);
	}
	loc.cpus = numa.cpus;
	gf_bitmap_or(&r->n->cpus, &numa.cpus);
	if (numaid >= 0) {
		gf_bitmap_set(&loc.mems, (int)numaid);
		if (gf_node_add_numa(r->n, &numa) < 0)
			return toobig(r, x, "NUMA nodes", GF_MAX_NUMA);
	}
	struct gf_pci_obj hb = { .parent = -1,
				 .kind = GF_PCI_HOSTBRIDGE,
				 .domain = 0xffff,
				 .bus = (uint8_t)r->n->nlocs };
	hb.loc = gf_node_add_loc(r->n, &loc);
	if (hb.loc < 0)
		return toobig(r, x, "localities", GF_MAX_LOCS);
	int hbi = add_pci(r, x, &hb);
	if (hbi < 0)
		return hbi;
	for (xmlNode *c = x->children; c; c = c->next) {
		int rc = 0;
		if (is(c, "pci"))
			rc = walk_pci(r, c, hbi, 1);
		else if (is(c, "nic"))
			rc = cpu_nic(r, c, hbi, (int)numaid);
		if (rc < 0)
			return rc;
	}
	return 0;
}

static void resolve_links(struct rd *r)
{
	struct gf_node *n = r->n;
	int unknown = 0, self = 0;
	for (int i = 0; i < r->nlinks; i++) {
		const struct pending_link *l = &r->links[i];
		int g = gf_node_gpu_by_pci(n, l->gpu_pci);
		if (g < 0)
			continue;
		if (!l->to_gpu) {
			int s = n->nvswitch_links[g] + l->count;
			n->nvswitch_links[g] = (uint8_t)(s > 255 ? 255 : s);
			continue;
		}
		char busid[16];
		gf_note(busid, sizeof(busid), "%04x:%02x:%02x.%x", l->domain,
			l->bus, l->dev, l->func);
		int p = gf_node_gpu_by_busid(n, busid);
		if (p == g) {
			self++;
			continue;
		}
		if (p < 0) {
			unknown++;
			continue;
		}
		/* both ends list the pair: keep the larger count */
		if (n->nvlinks[g][p] < l->count)
			n->nvlinks[g][p] = n->nvlinks[p][g] = (uint8_t)l->count;
	}
	n->nvlink_known = r->any_nvlink;
	if (self)
		gf_node_note(n,
			     "%d NVLink entries name their own GPU as target "
			     "(an NVLink bridge or NVSwitch NCCL could not "
			     "identify): ignored",
			     self);
	if (unknown)
		gf_node_note(n,
			     "%d NVLink entries name a GPU not in the file: "
			     "ignored",
			     unknown);
	if (!r->any_nvlink)
		gf_node_note(n, "the file lists no NVLink (NCCL reads it from "
				"NVML): join NVML on the live node (--nvml)");
	if (r->xgmi)
		gf_node_note(n, "%d xGMI links listed: not modelled", r->xgmi);
}

static int load_doc(struct rd *r, xmlDoc *doc)
{
	xmlNode *root = xmlDocGetRootElement(doc);
	if (root == NULL || !is(root, "system"))
		return gf_err_set(r->e, GF_EPARSE,
				  "%s: not an NCCL topology file (expected a "
				  "<system> root element)",
				  r->what);
	if (doc->intSubset || doc->extSubset)
		return gf_err_set(r->e, GF_EPARSE,
				  "%s: a DOCTYPE is not allowed in an NCCL "
				  "topology file",
				  r->what);
	int ncpu = 0;
	for (xmlNode *c = root->children; c; c = c->next) {
		if (!is(c, "cpu"))
			continue;
		ncpu++;
		int rc = walk_cpu(r, c);
		if (rc < 0)
			return rc;
	}
	struct gf_node *n = r->n;
	if (n->ngpus == 0) {
		if (r->unclassified)
			return gf_err_set(
				r->e, GF_ENOGPU,
				"no GPU in '%s': %d PCI devices are listed "
				"without a class (NCCL completes them from the "
				"live machine's sysfs)",
				r->what, r->unclassified);
		return gf_err_set(r->e, GF_ENOGPU,
				  "no GPU in '%s': %d <cpu> elements, %d NICs, "
				  "no GPU listed",
				  r->what, ncpu, n->nnics);
	}
	gf_node_finish(n);
	for (int i = 1; i < n->ngpus; i++)
		if (strcmp(n->gpus[i - 1].bus_id, n->gpus[i].bus_id) == 0)
			return gf_err_set(r->e, GF_EPARSE,
					  "%s: two GPUs at PCI bus id %s",
					  r->what, n->gpus[i].bus_id);
	resolve_links(r);
	if (r->unclassified)
		gf_node_note(n,
			     "%d PCI devices listed without a class: not shown",
			     r->unclassified);
	if (gf_bitmap_is_empty(&n->cpus))
		gf_node_note(n, "the file gives no CPU affinity: CPU binding "
				"is unknown");
	return 0;
}

int gf_nccl_xml_load(struct gf_node *n, const char *path, const char *buf,
		     size_t len, const char *what, struct gf_err *e)
{
	char *file = NULL;
	int rc = gf_dynlib_open(&xml_lib, e);
	if (rc)
		return rc;
	if (path) {
		rc = gf_file_read(path, GF_NCCL_XML_MAX, &file, &len, e);
		if (rc)
			return rc;
		buf = file;
		what = path;
	}
	if (len > GF_NCCL_XML_MAX || len > 0x7fffffff) {
		gf_free(file);
		return gf_err_set(e, GF_ETOOBIG, "%s: larger than %u MiB", what,
				  GF_NCCL_XML_MAX >> 20);
	}
	if (len == 0) {
		gf_free(file);
		return gf_err_set(e, GF_EPARSE, "%s: empty file", what);
	}
	xmlDoc *doc = xmlReadMemory(buf, (int)len, what, NULL,
				    XML_PARSE_NONET | XML_PARSE_NOERROR |
					    XML_PARSE_NOWARNING);
	if (doc == NULL) {
		const xmlError *x = xmlGetLastError();
		char msg[200] = "malformed XML";
		if (x && x->message) {
			gf_note(msg, sizeof(msg), "%s", x->message);
			/* one line: libxml2 puts details after a newline */
			for (char *c = msg; *c; c++)
				if (*c == '\n')
					*c = c[1] ? ' ' : '\0';
		}
		rc = gf_err_set(e, GF_EPARSE, "%s:%d: malformed XML: %s", what,
				x ? x->line : 0, msg);
		xmlResetLastError();
		gf_free(file);
		return rc;
	}
	struct rd r = { .n = n, .what = what, .e = e };
	gf_note(n->source, sizeof(n->source), "%s", what);
	n->this_system = false;
	rc = load_doc(&r, doc);
	gf_log(GF_LOG_DEBUG, "topo",
	       "%s: NCCL topology, %d GPUs, %d NICs, %d "
	       "NVLink entries",
	       what, n->ngpus, n->nnics, r.nlinks);
	gf_free(r.links);
	xmlFreeDoc(doc);
	gf_free(file);
	return rc;
}
