/*
 * hwloc_load.c - translate an hwloc topology into the node model.
 *
 * What is kept: PUs and their cores, NUMA nodes, the PCI tree (host
 * bridges, bridges, devices), GPUs (NVIDIA or AMD PCI functions of class
 * 03xx), NICs (PCI functions with an OpenFabrics/RDMA device; when a node
 * has none, network functions with a netdev), and NVLink counts from the
 * "NVLinkBandwidth" distance matrix that hwloc's NVML backend records.
 *
 * Pitfalls handled (reference/topology.md):
 *  - I/O objects vanish unless the I/O type filter is KEEP_ALL;
 *  - hwloc 2.9 rejects XML version 3.0: we check the version ourselves
 *    to say so in one line;
 *  - a device whose first non-I/O ancestor is the Machine on a multi-NUMA
 *    box has unknown locality, not "local to all".
 */
#include "topo/hwloc_load.h"

#include <errno.h>
#include <fcntl.h>
#include <hwloc.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "topo/source.h"
#include "util/clock.h"
#include "util/file.h"
#include "util/fmt.h"
#include "util/mem.h"

struct loader {
	struct gf_node *n;
	hwloc_topology_t t;
	struct gf_err *e;
	const char *what; /* the file name, or "live machine" */
	int nnuma_with_cpus;
	int rc;
};

static int bitmap_from_hwloc(struct gf_bitmap *out, hwloc_const_bitmap_t in)
{
	gf_bitmap_zero(out);
	if (in == NULL)
		return 0;
	if (hwloc_bitmap_weight(in) < 0) /* infinite set */
		return GF_ETOOBIG;
	unsigned i;
	hwloc_bitmap_foreach_begin(i, in)
	{
		if (gf_bitmap_set(out, (int)i) != 0)
			return GF_ETOOBIG;
	}
	hwloc_bitmap_foreach_end();
	return 0;
}

static const char *obj_info(hwloc_obj_t o, const char *name)
{
	const char *v = hwloc_obj_get_info_by_name(o, name);
	return v ? v : "";
}

static bool is_gpu_pci(hwloc_obj_t o)
{
	unsigned cls = o->attr->pcidev.class_id >> 8;
	unsigned v = o->attr->pcidev.vendor_id;
	unsigned full = o->attr->pcidev.class_id;
	if (v == 0x10de)
		return cls == 0x03;
	/* AMD: compute parts are 0380/0302; 0300 VGA is a BMC or desktop. */
	return v == 0x1002 && (full == 0x0380 || full == 0x0302);
}

/* hwloc's NVML backend marks switches with a subtype; one DGX-2 export
 * has a switch whose PCI ids read as zero, so trust the subtype first. */
static bool is_nvswitch_pci(hwloc_obj_t o)
{
	if (o->subtype && strcmp(o->subtype, "NVSwitch") == 0)
		return true;
	return o->attr->pcidev.vendor_id == 0x10de &&
	       o->attr->pcidev.class_id == 0x0680;
}

/* Pick the most telling OS device name for a GPU: nvml, cuda, rsmi... */
static void gpu_osdev_name(hwloc_obj_t pci, char *out, size_t size)
{
	static const char *const pref[] = { "nvml", "cuda", "rsmi", "opencl",
					    "card" };
	out[0] = '\0';
	for (size_t p = 0; p < sizeof(pref) / sizeof(pref[0]); p++) {
		for (hwloc_obj_t c = pci->io_first_child; c;
		     c = c->next_sibling) {
			if (c->type != HWLOC_OBJ_OS_DEVICE || c->name == NULL)
				continue;
			if (strncmp(c->name, pref[p], strlen(pref[p])) == 0) {
				gf_note(out, size, "%s", c->name);
				return;
			}
		}
	}
}

static int add_gpu(struct loader *L, hwloc_obj_t o, int idx)
{
	struct gf_gpu g;
	uint16_t vendor = o->attr->pcidev.vendor_id;
	uint16_t device = o->attr->pcidev.device_id;
	if (!gf__topo_gpu_init(&g, idx, vendor, device)) {
		const char *m = obj_info(o, "PCIDevice");
		if (*m == '\0')
			m = obj_info(o, "GPUModel");
		if (*m)
			gf_note(g.name, sizeof(g.name), "%s", m);
		else
			gf_note(g.name, sizeof(g.name), "%s GPU %04x:%04x",
				vendor == 0x1002 ? "AMD" : "NVIDIA", vendor,
				device);
	}
	gpu_osdev_name(o, g.osdev, sizeof(g.osdev));
	for (hwloc_obj_t c = o->io_first_child; c; c = c->next_sibling) {
		const char *u = hwloc_obj_get_info_by_name(c, "NVIDIAUUID");
		if (u && g.uuid[0] == '\0')
			gf_note(g.uuid, sizeof(g.uuid), "%s", u);
	}
	if (gf_node_add_gpu(L->n, &g) < 0)
		return gf_err_set(L->e, GF_ETOOBIG,
				  "cannot load '%s': more than %d GPUs",
				  L->what, GF_MAX_GPUS);
	return 0;
}

static int add_nic(struct loader *L, hwloc_obj_t o, int idx, bool want_rdma)
{
	char netdev[32] = "";
	for (hwloc_obj_t c = o->io_first_child; c; c = c->next_sibling)
		if (c->type == HWLOC_OBJ_OS_DEVICE &&
		    c->attr->osdev.type == HWLOC_OBJ_OSDEV_NETWORK && c->name &&
		    netdev[0] == '\0')
			gf_note(netdev, sizeof(netdev), "%s", c->name);
	for (hwloc_obj_t c = o->io_first_child; c; c = c->next_sibling) {
		if (c->type != HWLOC_OBJ_OS_DEVICE || c->name == NULL)
			continue;
		hwloc_obj_osdev_type_t ty = c->attr->osdev.type;
		if (want_rdma ? ty != HWLOC_OBJ_OSDEV_OPENFABRICS
			      : ty != HWLOC_OBJ_OSDEV_NETWORK)
			continue;
		struct gf_nic nic;
		memset(&nic, 0, sizeof(nic));
		nic.pci = idx;
		nic.rdma = want_rdma;
		gf_note(nic.name, sizeof(nic.name), "%s", c->name);
		gf_note(nic.netdev, sizeof(nic.netdev), "%s", netdev);
		if (gf_node_add_nic(L->n, &nic) < 0)
			return gf_err_set(L->e, GF_ETOOBIG,
					  "cannot load '%s': more than %d NICs",
					  L->what, GF_MAX_NICS);
		if (!want_rdma)
			break; /* one entry per function */
	}
	return 0;
}

static bool has_osdev_type(hwloc_obj_t o, hwloc_obj_osdev_type_t ty)
{
	for (hwloc_obj_t c = o->io_first_child; c; c = c->next_sibling)
		if (c->type == HWLOC_OBJ_OS_DEVICE && c->attr->osdev.type == ty)
			return true;
	return false;
}

/* Add an I/O subtree below PCI parent `parent` (-1: a new root). */
static int walk_io(struct loader *L, hwloc_obj_t o, int parent, int loc)
{
	if (o->type == HWLOC_OBJ_OS_DEVICE || o->type == HWLOC_OBJ_MISC)
		return 0;
	struct gf_pci_obj p;
	memset(&p, 0, sizeof(p));
	p.parent = parent;
	p.loc = -1;
	if (o->type == HWLOC_OBJ_BRIDGE) {
		bool host =
			o->attr->bridge.upstream_type == HWLOC_OBJ_BRIDGE_HOST;
		p.kind = host ? GF_PCI_HOSTBRIDGE : GF_PCI_BRIDGE;
		if (!host) {
			p.domain =
				(uint16_t)o->attr->bridge.upstream.pci.domain;
			p.bus = o->attr->bridge.upstream.pci.bus;
			p.dev = o->attr->bridge.upstream.pci.dev;
			p.func = o->attr->bridge.upstream.pci.func;
		}
	} else if (o->type == HWLOC_OBJ_PCI_DEVICE) {
		p.kind = GF_PCI_DEVICE;
		p.domain = (uint16_t)o->attr->pcidev.domain;
		p.bus = o->attr->pcidev.bus;
		p.dev = o->attr->pcidev.dev;
		p.func = o->attr->pcidev.func;
		p.vendor_id = o->attr->pcidev.vendor_id;
		p.device_id = o->attr->pcidev.device_id;
		p.class_id = o->attr->pcidev.class_id;
	} else {
		return 0;
	}
	if (parent >= 0 && L->n->pci[parent].kind == GF_PCI_DEVICE)
		return gf_err_set(L->e, GF_ETOPO,
				  "cannot load '%s': a PCI device has PCI "
				  "objects below it (malformed XML)",
				  L->what);
	if (parent < 0) {
		if (p.kind != GF_PCI_HOSTBRIDGE) {
			/* No host bridge recorded: give the subtree one. */
			struct gf_pci_obj hb;
			memset(&hb, 0, sizeof(hb));
			hb.parent = -1;
			hb.kind = GF_PCI_HOSTBRIDGE;
			hb.loc = loc;
			int h = gf_node_add_pci(L->n, &hb);
			if (h < 0)
				goto toobig;
			p.parent = h;
		} else {
			p.loc = loc;
		}
	}
	int idx = gf_node_add_pci(L->n, &p);
	if (idx < 0)
		goto toobig;
	o->userdata = (void *)(intptr_t)(idx + 1);
	if (p.kind == GF_PCI_DEVICE) {
		int rc = 0;
		if (is_gpu_pci(o))
			rc = add_gpu(L, o, idx);
		else if (has_osdev_type(o, HWLOC_OBJ_OSDEV_OPENFABRICS))
			rc = add_nic(L, o, idx, true);
		if (rc)
			return rc;
	}
	for (hwloc_obj_t c = o->io_first_child; c; c = c->next_sibling) {
		int rc = walk_io(L, c, idx, loc);
		if (rc)
			return rc;
	}
	return 0;
toobig:
	return gf_err_set(L->e, GF_ETOOBIG,
			  "cannot load '%s': more than %d PCI objects", L->what,
			  GF_MAX_PCI);
}

/* Walk normal objects; each one with I/O children becomes a locality. */
static int walk(struct loader *L, hwloc_obj_t o)
{
	if (o->io_arity > 0) {
		struct gf_locality loc;
		int rc = bitmap_from_hwloc(&loc.cpus, o->cpuset);
		if (rc == 0)
			rc = bitmap_from_hwloc(&loc.mems, o->nodeset);
		if (rc)
			return gf_err_set(L->e, rc,
					  "cannot load '%s': CPU or NUMA ids "
					  "beyond %d",
					  L->what, GF_BITMAP_BITS);
		loc.known = !(o->type == HWLOC_OBJ_MACHINE &&
			      L->nnuma_with_cpus > 1);
		int li = gf_node_add_loc(L->n, &loc);
		if (li < 0)
			return gf_err_set(L->e, GF_ETOOBIG,
					  "cannot load '%s': more than %d "
					  "PCI localities",
					  L->what, GF_MAX_LOCS);
		for (hwloc_obj_t c = o->io_first_child; c;
		     c = c->next_sibling) {
			rc = walk_io(L, c, -1, li);
			if (rc)
				return rc;
		}
	}
	for (hwloc_obj_t c = o->first_child; c; c = c->next_sibling) {
		int rc = walk(L, c);
		if (rc)
			return rc;
	}
	return 0;
}

/* out[pu] = k for every PU of the k-th object of type in the topology
 * (a core, a package); how many there are. */
static int map_pus(struct loader *L, hwloc_obj_type_t type, int16_t *out)
{
	int nobj = hwloc_get_nbobjs_by_type(L->t, type);
	for (int k = 0; k < nobj; k++) {
		hwloc_obj_t o = hwloc_get_obj_by_type(L->t, type, (unsigned)k);
		unsigned pu;
		if (o == NULL || o->cpuset == NULL)
			continue;
		hwloc_bitmap_foreach_begin(pu, o->cpuset)
		{
			if (pu < GF_BITMAP_BITS)
				out[pu] = (int16_t)k;
		}
		hwloc_bitmap_foreach_end();
	}
	return nobj;
}

static int load_cpus(struct loader *L)
{
	struct gf_node *n = L->n;
	hwloc_obj_t root = hwloc_get_root_obj(L->t);
	if (bitmap_from_hwloc(&n->cpus, root->cpuset) != 0)
		return gf_err_set(L->e, GF_ETOOBIG,
				  "cannot load '%s': more than %d CPUs",
				  L->what, GF_BITMAP_BITS);
	int ncores = map_pus(L, HWLOC_OBJ_CORE, n->pu_core);
	map_pus(L, HWLOC_OBJ_PACKAGE, n->pu_package);
	int pu;
	gf_bitmap_for_each(pu, &n->cpus)
	{
		if (n->pu_package[pu] < 0) /* no Package objects: one */
			n->pu_package[pu] = 0;
		if (n->pu_core[pu] < 0) /* no Core objects: a PU is a core */
			n->pu_core[pu] = (int16_t)(ncores + pu);
	}
	int nn = hwloc_get_nbobjs_by_type(L->t, HWLOC_OBJ_NUMANODE);
	for (int i = 0; i < nn; i++) {
		hwloc_obj_t o = hwloc_get_obj_by_type(L->t, HWLOC_OBJ_NUMANODE,
						      (unsigned)i);
		struct gf_numa numa;
		if (o == NULL)
			continue;
		numa.os_index = (int)o->os_index;
		numa.memory_bytes = o->attr->numanode.local_memory;
		if (bitmap_from_hwloc(&numa.cpus, o->cpuset) != 0 ||
		    o->os_index >= GF_BITMAP_BITS)
			return gf_err_set(L->e, GF_ETOOBIG,
					  "cannot load '%s': NUMA node %u "
					  "beyond limits",
					  L->what, o->os_index);
		if (!gf_bitmap_is_empty(&numa.cpus))
			L->nnuma_with_cpus++;
		if (gf_node_add_numa(n, &numa) < 0)
			return gf_err_set(L->e, GF_ETOOBIG,
					  "cannot load '%s': more than %d NUMA "
					  "nodes",
					  L->what, GF_MAX_NUMA);
	}
	return 0;
}

/* Fallback NICs: network functions with a netdev, when no RDMA NIC. */
static int add_plain_nics(struct loader *L)
{
	hwloc_obj_t o = NULL;
	while ((o = hwloc_get_next_pcidev(L->t, o)) != NULL) {
		if ((o->attr->pcidev.class_id >> 8) != 0x02 ||
		    o->userdata == NULL)
			continue;
		int idx = (int)(intptr_t)o->userdata - 1;
		int rc = add_nic(L, o, idx, false);
		if (rc)
			return rc;
	}
	return 0;
}

static int pci_of(hwloc_obj_t o)
{
	if (o->type == HWLOC_OBJ_OS_DEVICE)
		o = o->parent;
	if (o == NULL || o->type != HWLOC_OBJ_PCI_DEVICE || !o->userdata)
		return -1;
	return (int)(intptr_t)o->userdata - 1;
}

/* NVLink counts from hwloc's NVLinkBandwidth matrix (NVML backend). */
static void load_nvlink(struct loader *L)
{
	struct gf_node *n = L->n;
	struct hwloc_distances_s *d = NULL;
	unsigned nr = 1;
	if (hwloc_distances_get_by_name(L->t, "NVLinkBandwidth", &nr, &d, 0) !=
		    0 ||
	    nr == 0)
		return;
	n->nvlink_known = true;
	unsigned k = d->nbobjs;
	for (unsigned i = 0; i < k; i++) {
		int pi = pci_of(d->objs[i]);
		int gi = pi >= 0 ? gf_node_gpu_by_pci(n, pi) : -1;
		if (gi < 0)
			continue;
		const struct gf_gpu_model *m = n->gpus[gi].model;
		uint64_t per_link =
			m && m->nvlink_link_gbps
				? (uint64_t)m->nvlink_link_gbps * 1000
				: 25000;
		for (unsigned j = 0; j < k; j++) {
			uint64_t v = d->values[i * k + j];
			if (i == j || v == 0)
				continue;
			int pj = pci_of(d->objs[j]);
			if (pj < 0)
				continue;
			int links = (int)((v + per_link / 2) / per_link);
			if (links > 255)
				links = 255;
			int gj = gf_node_gpu_by_pci(n, pj);
			if (gj == gi) /* two objects of one GPU (bad XML) */
				continue;
			if (gj >= 0) {
				n->nvlinks[gi][gj] = (uint8_t)links;
			} else if (is_nvswitch_pci(
					   d->objs[j]->type ==
							   HWLOC_OBJ_OS_DEVICE
						   ? d->objs[j]->parent
						   : d->objs[j])) {
				int s = n->nvswitch_links[gi] + links;
				n->nvswitch_links[gi] =
					(uint8_t)(s > 255 ? 255 : s);
			}
		}
	}
	/* Keep the matrix symmetric even if the recording is not. */
	for (int i = 0; i < n->ngpus; i++)
		for (int j = 0; j < i; j++) {
			uint8_t m = n->nvlinks[i][j] < n->nvlinks[j][i]
					    ? n->nvlinks[i][j]
					    : n->nvlinks[j][i];
			n->nvlinks[i][j] = n->nvlinks[j][i] = m;
		}
	hwloc_distances_release(L->t, d);
}

/*
 * Check what hwloc will choke on, to give one clear line: not XML, not an
 * hwloc topology, a version this hwloc cannot import.
 */
static int precheck_xml(const char *buf, size_t len, const char *what,
			struct gf_err *e)
{
	size_t lim = len < 4096 ? len : 4096;
	char head[4097];
	memcpy(head, buf, lim);
	head[lim] = '\0';
	if (memchr(buf, '\0', len) != NULL)
		return gf_err_set(e, GF_EPARSE,
				  "cannot load '%s': binary data, not an hwloc "
				  "XML",
				  what);
	const char *t = strstr(head, "<topology");
	if (t == NULL)
		return gf_err_set(e, GF_EPARSE,
				  "cannot load '%s': not an hwloc XML (no "
				  "<topology> element)",
				  what);
	const char *v = strstr(t, "version=\"");
	const char *close = strchr(t, '>');
	if (v && close && v < close) {
		long major = strtol(v + 9, NULL, 10);
		int vlen = (int)strcspn(v + 9, "\"");
		if (major > 2)
			return gf_err_set(e, GF_EPARSE,
					  "cannot load '%s': hwloc XML version "
					  "%.*s is newer than hwloc %s reads "
					  "(2.0); export it with hwloc 2.x",
					  what, vlen < 16 ? vlen : 16, v + 9,
					  HWLOC_VERSION);
	}
	return 0;
}

/*
 * Keep hwloc to the components built into libhwloc (linux, x86, xml,
 * no_os): they give CPUs, NUMA and the PCI tree from sysfs, all we read.
 * Distributions ship plugins beside it (libhwloc-plugins: opencl, gl,
 * pci, xml_libxml) that hwloc dlopens at its first topology init; the
 * OpenCL one enumerates OpenCL platforms, which can pull in an LLVM
 * (60 MiB and 0.2-0.5 s per run, measured on an H200 host and on Debian
 * with pocl).  GPUs come from our own NVML loader instead.  Set
 * GPUFLEET_HWLOC_PLUGINS=1 to let hwloc load its plugins after all.
 * Called before every hwloc_topology_init; the environment is set once,
 * before the first, while the process is still starting.
 */
static void set_no_plugins(void)
{
	const char *want = getenv("GPUFLEET_HWLOC_PLUGINS");
	if (want && strcmp(want, "1") == 0)
		return;
	/* no directory of that name: hwloc finds no plugin to load */
	setenv("HWLOC_PLUGINS_PATH",
	       "/nonexistent/gpufleet-loads-no-hwloc-plugins", 1);
}

static void no_hwloc_plugins(void)
{
	static pthread_once_t once = PTHREAD_ONCE_INIT;
	pthread_once(&once, set_no_plugins);
}

/*
 * hwloc 2.9 crashes on some malformed XML (an object without its
 * complete_cpuset, found by tests/tools/xml_mutate), and spends 10-30 s
 * and half a GiB on others (a PU without os_index: hwloc sizes a bitmap
 * by the unknown index, issue 20's F7).  Parse a recording once in a
 * child process first, caged: GF_TOPO_PROBE_CPU_S of CPU (RLIMIT_CPU),
 * its address space grown by at most GF_TOPO_PROBE_MEM_MB plus four
 * times the document (RLIMIT_AS, over what the fork starts with, so
 * that a sanitizer's reserved shadow does not count) and
 * GF_TOPO_PROBE_WALL_MS of wall time (then SIGKILL).  If the child dies
 * or hits a limit, the user gets a one-line error instead of a crash or
 * a stall; only a document the child parsed within the limits is then
 * parsed in-process (the same bytes, the same hwloc: bounded the same
 * way).  Costs one extra parse (~1 ms).
 */
/* AddressSanitizer's allocator dies where malloc would return NULL
 * under RLIMIT_AS: in the ASan builds the child's death callback exits
 * GF_PROBE_ASAN_DIED, read as the memory limit (it may also be a report
 * about hwloc itself: the child's stderr is gone either way). */
#if defined(__SANITIZE_ADDRESS__)
#define GF_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define GF_ASAN 1
#endif
#endif
#ifndef GF_ASAN
#define GF_ASAN 0
#endif
#define GF_PROBE_ASAN_DIED 5
#if GF_ASAN
void __asan_set_death_callback(void (*callback)(void));
static void asan_died(void)
{
	_exit(GF_PROBE_ASAN_DIED);
}
#endif

/* This process's address space and resident set, in bytes (0 unknown). */
static void vm_now(size_t *vm, size_t *rss)
{
	FILE *f = fopen("/proc/self/statm", "r");
	unsigned long pages = 0, res = 0;
	if (f) {
		if (fscanf(f, "%lu %lu", &pages, &res) != 2)
			pages = res = 0;
		fclose(f);
	}
	*vm = (size_t)pages * (size_t)sysconf(_SC_PAGESIZE);
	*rss = (size_t)res * (size_t)sysconf(_SC_PAGESIZE);
}

static size_t probe_mem_cap(size_t len)
{
	return ((size_t)GF_TOPO_PROBE_MEM_MB << 20) + 4 * len;
}

/*
 * Whether every PU and NUMA node has an os_index the node model can
 * hold.  One without (hwloc's unknown index, or a huge one) is what
 * makes hwloc size its bitmaps by it: in the caged child the allocation
 * fails and hwloc carries on, so the child must say so, or the parent's
 * uncaged parse would pay for it.
 */
static bool sane_indexes(hwloc_topology_t t)
{
	int npu = hwloc_get_nbobjs_by_type(t, HWLOC_OBJ_PU);
	for (int i = 0; i < npu; i++) {
		hwloc_obj_t o =
			hwloc_get_obj_by_type(t, HWLOC_OBJ_PU, (unsigned)i);
		if (o && o->os_index >= GF_BITMAP_BITS)
			return false;
	}
	int nn = hwloc_get_nbobjs_by_type(t, HWLOC_OBJ_NUMANODE);
	for (int i = 0; i < nn; i++) {
		hwloc_obj_t o = hwloc_get_obj_by_type(t, HWLOC_OBJ_NUMANODE,
						      (unsigned)i);
		if (o && o->os_index >= GF_TOPO_PROBE_NUMA_MAX)
			return false;
	}
	hwloc_const_bitmap_t all = hwloc_topology_get_complete_cpuset(t);
	return all == NULL || (hwloc_bitmap_last(all) < GF_BITMAP_BITS &&
			       hwloc_bitmap_last(all) >= -1);
}

static void probe_child(const char *xml, size_t len, size_t vm0)
{
	/* Die of the signal, not of a sanitizer's handler. */
	signal(SIGSEGV, SIG_DFL);
	signal(SIGBUS, SIG_DFL);
	signal(SIGFPE, SIG_DFL);
	signal(SIGABRT, SIG_DFL);
	signal(SIGXCPU, SIG_DFL);
	/* Its diagnostics are ours to give, in one line. */
	int devnull = open("/dev/null", O_WRONLY);
	if (devnull >= 0)
		dup2(devnull, STDERR_FILENO);
	struct rlimit cpu = { GF_TOPO_PROBE_CPU_S, GF_TOPO_PROBE_CPU_S + 1 };
	setrlimit(RLIMIT_CPU, &cpu);
#if GF_ASAN
	__asan_set_death_callback(asan_died);
#endif
	if (vm0 > 0) {
		rlim_t as = (rlim_t)(vm0 + probe_mem_cap(len));
		struct rlimit mem = { as, as };
		setrlimit(RLIMIT_AS, &mem);
	}
	hwloc_topology_t t;
	no_hwloc_plugins();
	int ok = hwloc_topology_init(&t) == 0;
	if (ok) {
		hwloc_topology_set_io_types_filter(t,
						   HWLOC_TYPE_FILTER_KEEP_ALL);
		ok = hwloc_topology_set_xmlbuffer(t, xml, (int)len + 1) == 0 &&
		     hwloc_topology_load(t) == 0;
	}
	_exit(!ok ? 3 : sane_indexes(t) ? 0 : 4);
}

/* Wait for the child, at most GF_TOPO_PROBE_WALL_MS (then kill it):
 * 0 with *st and *ru, *killed when the wall limit ended it; -1 when
 * waiting failed. */
static int probe_wait(pid_t pid, int *st, struct rusage *ru, bool *killed)
{
	double deadline = gf_clock_ms() + GF_TOPO_PROBE_WALL_MS;
	long nap_us = 200;
	*killed = false;
	for (;;) {
		pid_t w = wait4(pid, st, *killed ? 0 : WNOHANG, ru);
		if (w == pid)
			return 0;
		if (w < 0 && errno != EINTR)
			return -1;
		if (w != 0 || *killed)
			continue;
		if (gf_clock_ms() >= deadline) {
			kill(pid, SIGKILL);
			*killed = true;
			continue;
		}
		struct timespec nap = { 0, nap_us * 1000 };
		nanosleep(&nap, NULL);
		if (nap_us < 20000)
			nap_us *= 2;
	}
}

static int probe_xml(const char *xml, size_t len, const char *what,
		     struct gf_err *e)
{
	size_t vm0, rss0;
	vm_now(&vm0, &rss0);
	fflush(NULL);
	pid_t pid = fork();
	if (pid < 0)
		return 0; /* cannot isolate: parse in-process as before */
	if (pid == 0)
		probe_child(xml, len, vm0);
	int st = 0;
	struct rusage ru;
	bool killed;
	memset(&ru, 0, sizeof(ru));
	if (probe_wait(pid, &st, &ru, &killed) != 0)
		return 0;
	if (WIFEXITED(st) && WEXITSTATUS(st) == 0)
		return 0;
	/* the memory cap, reached: the child grew near it, then failed */
	bool mem_hit = vm0 > 0 && ((size_t)ru.ru_maxrss * 1024 >=
					   rss0 + probe_mem_cap(len) / 2 ||
				   (GF_ASAN && WIFEXITED(st) &&
				    WEXITSTATUS(st) == GF_PROBE_ASAN_DIED));
	if (killed || (WIFSIGNALED(st) && WTERMSIG(st) == SIGXCPU) ||
	    ru.ru_utime.tv_sec + ru.ru_stime.tv_sec >= GF_TOPO_PROBE_CPU_S ||
	    mem_hit)
		return gf_err_set(e, GF_EPARSE,
				  "cannot load '%s': hwloc hit the %s limit "
				  "parsing it (%d s CPU, %d s wall, %zu MiB; "
				  "an object without os_index?)",
				  what,
				  killed    ? "wall-time"
				  : mem_hit ? "memory"
					    : "CPU-time",
				  GF_TOPO_PROBE_CPU_S,
				  GF_TOPO_PROBE_WALL_MS / 1000,
				  probe_mem_cap(len) >> 20);
	if (WIFEXITED(st) && WEXITSTATUS(st) == 4)
		return gf_err_set(e, GF_EPARSE,
				  "cannot load '%s': a PU or NUMA node has no "
				  "usable os_index (missing, or past %d), on "
				  "which hwloc runs past the limits of its "
				  "parsing child (%d s CPU, %zu MiB)",
				  what, GF_BITMAP_BITS - 1, GF_TOPO_PROBE_CPU_S,
				  probe_mem_cap(len) >> 20);
	if (WIFSIGNALED(st))
		return gf_err_set(e, GF_EPARSE,
				  "cannot load '%s': hwloc crashed parsing it "
				  "(malformed XML, signal %d)",
				  what, WTERMSIG(st));
	return gf_err_set(e, GF_ETOPO,
			  "cannot load '%s': hwloc cannot import it "
			  "(malformed or truncated XML)",
			  what);
}

int gf_topo_load(struct gf_node *n, const struct gf_topo_source *src,
		 struct gf_err *e)
{
	struct loader L = { .n = n, .e = e };
	char *filebuf = NULL;
	const char *xml = src->xml_buf;
	size_t xml_len = src->xml_len;
	int rc;

	L.what = src->xml_path ? src->xml_path
			       : (xml ? "<xml buffer>" : "this machine");
	if (src->xml_path) {
		rc = gf_file_read(src->xml_path, GF_TOPO_XML_MAX, &filebuf,
				  &xml_len, e);
		if (rc)
			return rc;
		xml = filebuf;
	} else if (xml) {
		if (xml_len > GF_TOPO_XML_MAX)
			return gf_err_set(e, GF_ETOOBIG,
					  "cannot load '%s': larger than %u "
					  "MiB",
					  L.what, GF_TOPO_XML_MAX >> 20);
		/* hwloc wants a NUL-terminated buffer. */
		filebuf = gf_malloc(xml_len + 1);
		memcpy(filebuf, xml, xml_len);
		filebuf[xml_len] = '\0';
		xml = filebuf;
	}
	if (xml) {
		rc = precheck_xml(xml, xml_len, L.what, e);
		if (rc == 0)
			rc = probe_xml(xml, xml_len, L.what, e);
		if (rc)
			goto out_free;
	}
	no_hwloc_plugins();
	if (hwloc_topology_init(&L.t) != 0) {
		rc = gf_err_set(e, GF_ETOPO, "cannot initialise hwloc");
		goto out_free;
	}
	hwloc_topology_set_io_types_filter(L.t, HWLOC_TYPE_FILTER_KEEP_ALL);
	if (xml) {
		if (src->this_system)
			hwloc_topology_set_flags(
				L.t, HWLOC_TOPOLOGY_FLAG_IS_THISSYSTEM);
		if (hwloc_topology_set_xmlbuffer(L.t, xml, (int)xml_len + 1) !=
		    0) {
			rc = gf_err_set(e, GF_ETOPO,
					"cannot load '%s': hwloc cannot parse "
					"it (malformed or truncated XML)",
					L.what);
			goto out_destroy;
		}
	}
	if (hwloc_topology_load(L.t) != 0) {
		rc = gf_err_set(e, GF_ETOPO,
				"cannot load '%s': hwloc cannot import it "
				"(malformed or truncated XML)",
				L.what);
		goto out_destroy;
	}
	gf_note(n->source, sizeof(n->source), "%s",
		src->xml_path ? src->xml_path : (xml ? "xml" : "live"));
	n->this_system = hwloc_topology_is_thissystem(L.t) != 0;
	hwloc_obj_t root = hwloc_get_root_obj(L.t);
	gf_note(n->hostname, sizeof(n->hostname), "%s",
		obj_info(root, "HostName"));
	rc = load_cpus(&L);
	if (rc == 0)
		rc = walk(&L, root);
	if (rc == 0 && n->nnics == 0)
		rc = add_plain_nics(&L);
	if (rc)
		goto out_destroy;
	if (src->cpu_only) { /* a CPU node (no NVML): its CPUs and memory */
		n->ngpus = 0;
		gf_node_finish(n);
		goto out_destroy; /* rc 0 */
	}
	if (n->ngpus == 0) {
		if (src->xml_path || xml)
			rc = gf_err_set(e, GF_ENOGPU,
					"no GPU in '%s': no NVIDIA or AMD PCI "
					"display device",
					L.what);
		else
			rc = gf_err_set(e, GF_ENOGPU,
					"this machine has no GPU: no NVIDIA or "
					"AMD PCI display device");
		goto out_destroy;
	}
	gf_node_finish(n);
	for (int i = 1; i < n->ngpus; i++)
		if (strcmp(n->gpus[i - 1].bus_id, n->gpus[i].bus_id) == 0) {
			rc = gf_err_set(e, GF_EPARSE,
					"cannot load '%s': two GPUs at PCI bus "
					"id %s",
					L.what, n->gpus[i].bus_id);
			goto out_destroy;
		}
	load_nvlink(&L);
	for (int i = 0; i < n->ngpus; i++)
		if (!n->gpus[i].locality_known) {
			gf_node_note(n,
				     "GPU%d: firmware gave no PCI locality; "
				     "its CPU affinity is unknown",
				     i);
			break;
		}
	rc = 0;
out_destroy:
	hwloc_topology_destroy(L.t);
out_free:
	gf_free(filebuf);
	return rc;
}

int gf_topo_bind_self(const struct gf_bitmap *cpus,
		      const struct gf_bitmap *mems, struct gf_err *e)
{
	hwloc_topology_t t;
	int rc = 0;
	no_hwloc_plugins();
	if (hwloc_topology_init(&t) != 0 || hwloc_topology_load(t) != 0)
		return gf_err_set(e, GF_ETOPO, "cannot load live topology");
	hwloc_bitmap_t set = hwloc_bitmap_alloc();
	int i;
	if (cpus) {
		hwloc_bitmap_zero(set);
		gf_bitmap_for_each(i, cpus) hwloc_bitmap_set(set, (unsigned)i);
		if (hwloc_set_cpubind(t, set, HWLOC_CPUBIND_PROCESS) != 0) {
			rc = gf_err_set(e, GF_EBIND, "cannot bind CPUs: %s",
					gf_strerror(-errno));
			goto out;
		}
	}
	if (mems) {
		hwloc_bitmap_zero(set);
		gf_bitmap_for_each(i, mems) hwloc_bitmap_set(set, (unsigned)i);
		/* The calling thread: Linux has no process-wide memory
		 * policy (set_mempolicy is per thread), so hwloc answers
		 * HWLOC_MEMBIND_PROCESS with ENOSYS there.  The policy is
		 * inherited across fork and exec, which is what the callers
		 * (gpufleet bind, the SPANK plugin's task_init) need.
		 * STRICT: MPOL_BIND on the whole set; without it hwloc asks
		 * for MPOL_PREFERRED, which keeps only the set's first node. */
		if (hwloc_set_membind(t, set, HWLOC_MEMBIND_BIND,
				      HWLOC_MEMBIND_THREAD |
					      HWLOC_MEMBIND_STRICT |
					      HWLOC_MEMBIND_BYNODESET) != 0) {
			rc = gf_err_set(e, GF_EBIND, "cannot bind memory: %s",
					gf_strerror(-errno));
			goto out;
		}
	}
out:
	hwloc_bitmap_free(set);
	hwloc_topology_destroy(t);
	return rc;
}
