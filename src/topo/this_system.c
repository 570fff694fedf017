/*
 * this_system.c - a recording against the machine it is said to be
 * (this_system.h): the kernel's CPU and NUMA lists, its GPUs by PCI bus
 * id (sysfs, or NVML), its host name.
 */
#include "topo/this_system.h"

#include <dirent.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util/fmt.h"

/* The first line of ROOT/rel into out, blanks at the end cut; false when
 * it cannot be read. */
static bool read_line(const char *root, const char *rel, char *out, size_t size)
{
	char path[1024];
	if (gf_fmt(path, sizeof(path), "%s%s", root, rel))
		return false; /* too long a root: cannot be read */
	FILE *f = fopen(path, "r");
	if (f == NULL)
		return false;
	bool ok = fgets(out, (int)size, f) != NULL;
	fclose(f);
	if (!ok)
		return false;
	size_t n = strlen(out);
	while (n > 0 && (out[n - 1] == '\n' || out[n - 1] == ' '))
		out[--n] = '\0';
	return true;
}

static int cmp_busid(const void *a, const void *b)
{
	return strcmp(a, b);
}

/* "0000:18:00.0" from any form gf_pci_parse_busid takes; false if none. */
static bool norm_busid(const char *s, char out[16])
{
	uint16_t dom;
	uint8_t bus, dev, fn;
	if (gf_pci_parse_busid(s, &dom, &bus, &dev, &fn) != 0)
		return false;
	gf_note(out, 16, "%04x:%02x:%02x.%x", dom, bus, dev, fn);
	return true;
}

/* The rule of hwloc_load.c's is_gpu_pci, on sysfs's class and vendor. */
static bool sysfs_gpu(const char *root, const char *dev)
{
	char rel[512], v[32], c[32];
	if (gf_fmt(rel, sizeof(rel), "/sys/bus/pci/devices/%s/vendor", dev) ||
	    !read_line(root, rel, v, sizeof(v)))
		return false;
	if (gf_fmt(rel, sizeof(rel), "/sys/bus/pci/devices/%s/class", dev) ||
	    !read_line(root, rel, c, sizeof(c)))
		return false;
	unsigned long vendor = strtoul(v, NULL, 16);
	unsigned long cls = strtoul(c, NULL, 16) >> 8; /* no prog-if */
	if (vendor == 0x10de)
		return (cls >> 8) == 0x03;
	return vendor == 0x1002 && (cls == 0x0380 || cls == 0x0302);
}

static void sysfs_gpus(struct gf_live *l, const char *root)
{
	char path[1024];
	l->ngpus = 0;
	l->gpus_from = "sysfs";
	if (gf_fmt(path, sizeof(path), "%s/sys/bus/pci/devices", root))
		return; /* too long a root: no sysfs to read */
	DIR *d = opendir(path);
	if (d == NULL)
		return;
	struct dirent *de;
	while ((de = readdir(d)) != NULL && l->ngpus < GF_MAX_GPUS)
		if (de->d_name[0] != '.' && sysfs_gpu(root, de->d_name) &&
		    norm_busid(de->d_name, l->gpus[l->ngpus]))
			l->ngpus++;
	closedir(d);
	qsort(l->gpus, (size_t)l->ngpus, sizeof(l->gpus[0]), cmp_busid);
}

int gf_live_read(struct gf_live *l, const char *root, struct gf_err *e)
{
	char buf[4096];
	memset(l, 0, sizeof(*l));
	if (root == NULL)
		root = "";
	if (!read_line(root, "/sys/devices/system/cpu/online", buf,
		       sizeof(buf)) ||
	    gf_bitmap_parse_list(&l->cpus, buf) != 0)
		return gf_err_set(e, GF_ETOPO,
				  "cannot read this machine's CPUs from "
				  "'%s/sys/devices/system/cpu/online'",
				  root);
	if (!read_line(root, "/sys/devices/system/node/online", buf,
		       sizeof(buf)) ||
	    gf_bitmap_parse_list(&l->numa, buf) != 0) {
		gf_bitmap_zero(&l->numa); /* no NUMA in the kernel: node 0 */
		gf_bitmap_set(&l->numa, 0);
	}
	if (*root)
		read_line(root, "/proc/sys/kernel/hostname", l->hostname,
			  sizeof(l->hostname));
	else if (gethostname(l->hostname, sizeof(l->hostname)) != 0)
		l->hostname[0] = '\0';
	l->hostname[sizeof(l->hostname) - 1] = '\0';
	sysfs_gpus(l, root);
	return 0;
}

int gf_live_nvml_gpus(struct gf_live *l, const struct gf_nvml *nv,
		      struct gf_err *e)
{
	unsigned count;
	int rc = gf_nvml_count(nv, &count, e);
	if (rc)
		return rc;
	int n = 0;
	for (unsigned i = 0; i < count && n < GF_MAX_GPUS; i++) {
		nvmlDevice_t d;
		nvmlPciInfo_t pci;
		if (!gf_nvml_pci(nv, i, &d, &pci))
			continue;
		if (norm_busid(pci.busId, l->gpus[n]))
			n++;
	}
	l->ngpus = n;
	l->gpus_from = "NVML";
	qsort(l->gpus, (size_t)n, sizeof(l->gpus[0]), cmp_busid);
	return 0;
}

/* Append "; " and the formatted text to out (bounded). */
__attribute__((format(printf, 3, 4))) static void add(char *out, size_t size,
						      const char *fmt, ...)
{
	size_t len = strlen(out);
	if (len + 3 >= size)
		return;
	if (len)
		len += (size_t)snprintf(out + len, size - len, "; ");
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(out + len, size - len, fmt, ap);
	va_end(ap);
}

/* Bus ids, 16 bytes each, in a flat list of n. */
static bool has_busid(const char *ids, int n, const char *id)
{
	for (int i = 0; i < n; i++)
		if (strcmp(ids + 16 * i, id) == 0)
			return true;
	return false;
}

/* The first of `ids` (n) missing from `in` (m), and how many are. */
static int missing(const char *ids, int n, const char *in, int m,
		   const char **first)
{
	int k = 0;
	*first = NULL;
	for (int i = 0; i < n; i++)
		if (!has_busid(in, m, ids + 16 * i)) {
			if (k++ == 0)
				*first = ids + 16 * i;
		}
	return k;
}

static void gpu_diff(const struct gf_node *n, const struct gf_live *l,
		     char *out, size_t size)
{
	char rec[GF_MAX_GPUS][16];
	int nr = 0;
	for (int i = 0; i < n->ngpus; i++)
		if (norm_busid(n->gpus[i].bus_id, rec[nr]))
			nr++;
	const char *live = &l->gpus[0][0], *a, *b;
	int ka = missing(&rec[0][0], nr, live, l->ngpus, &a);
	int kb = missing(live, l->ngpus, &rec[0][0], nr, &b);
	if (ka)
		add(out, size,
		    "GPU %s recorded, not here (%d of %d recorded GPUs not "
		    "in %s)",
		    a, ka, nr, l->gpus_from);
	if (kb)
		add(out, size,
		    "GPU %s here (%s), not recorded (%d GPUs not in the "
		    "recording)",
		    b, l->gpus_from, kb);
}

/* The name up to its first '.'. */
static size_t short_len(const char *h)
{
	return strcspn(h, ".");
}

int gf_this_system_check(const struct gf_node *n, const char *what,
			 const struct gf_live *l, struct gf_err *e)
{
	char diff[GF_ERR_MSG_MAX] = "", a[160], b[160];
	if (!gf_bitmap_equal(&n->cpus, &l->cpus)) {
		gf_bitmap_format_list(&n->cpus, a, sizeof(a));
		gf_bitmap_format_list(&l->cpus, b, sizeof(b));
		add(diff, sizeof(diff), "%d CPUs %s recorded, %d CPUs %s here",
		    gf_bitmap_count(&n->cpus), a, gf_bitmap_count(&l->cpus), b);
	}
	struct gf_bitmap numa;
	gf_bitmap_zero(&numa);
	for (int i = 0; i < n->nnuma; i++)
		gf_bitmap_set(&numa, n->numa[i].os_index);
	if (n->nnuma == 0)
		gf_bitmap_set(&numa, 0);
	if (!gf_bitmap_equal(&numa, &l->numa)) {
		gf_bitmap_format_list(&numa, a, sizeof(a));
		gf_bitmap_format_list(&l->numa, b, sizeof(b));
		add(diff, sizeof(diff), "NUMA nodes %s recorded, %s here", a,
		    b);
	}
	gpu_diff(n, l, diff, sizeof(diff));
	size_t hn = short_len(n->hostname), hl = short_len(l->hostname);
	if (hn && (hn != hl || strncmp(n->hostname, l->hostname, hn) != 0))
		add(diff, sizeof(diff),
		    "host name '%.64s' recorded, '%.64s' here", n->hostname,
		    l->hostname);
	if (!diff[0])
		return 0;
	return gf_err_set(e, GF_ENOTTHIS,
			  "'%.120s' is not a recording of this machine: %s",
			  what, diff);
}
