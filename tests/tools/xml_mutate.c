/*
 * xml_mutate.c - feed a few hundred mutated hwloc XMLs through the
 * topology loader, and as many mutated NCCL topology files through their
 * reader (run under ASan+UBSan by `make check`).  Each mutation must
 * either load into a node that passes gf_node_check, or fail with a
 * negative code and a one-line message.  A crash, a sanitizer report or a
 * silent failure fails the test.  Deterministic: a fixed-seed xorshift.
 *
 *   xml_mutate SHARED_DIR [COUNT_PER_FILE]
 * Prints "ok fuzz/xml-mutations ..." and "ok fuzz/nccl-xml-mutations ..."
 * or "FAIL ..." (and exits 1).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <gpufleet/node.h>

#include "topo/hwloc_load.h"
#include "topo/nccl_xml.h"

static uint64_t rng = 0x9e3779b97f4a7c15ULL;

static uint64_t next(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

static size_t pick(size_t n)
{
	return n ? (size_t)(next() % n) : 0;
}

static char *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return NULL;
	fseek(f, 0, SEEK_END);
	long n = ftell(f);
	fseek(f, 0, SEEK_SET);
	char *b = malloc((size_t)n + 1);
	if (fread(b, 1, (size_t)n, f) != (size_t)n) {
		free(b);
		fclose(f);
		return NULL;
	}
	fclose(f);
	b[n] = '\0'; /* strstr() in set_attr() reads up to here */
	*len = (size_t)n;
	return b;
}

/* Replace the value of the k-th occurrence of attr="..." with val. */
static size_t set_attr(char *out, size_t cap, const char *in, size_t len,
		       const char *attr, const char *val)
{
	size_t count = 0;
	for (const char *p = in; (p = strstr(p, attr)) != NULL; p++)
		count++;
	if (count == 0) {
		memcpy(out, in, len);
		return len;
	}
	size_t k = pick(count);
	const char *p = in;
	for (;; p++) {
		p = strstr(p, attr);
		if (k-- == 0)
			break;
	}
	const char *v = p + strlen(attr);
	const char *end = strchr(v, '"');
	if (end == NULL) {
		memcpy(out, in, len);
		return len;
	}
	size_t head = (size_t)(v - in), vl = strlen(val);
	size_t tail = len - (size_t)(end - in);
	if (head + vl + tail > cap) {
		memcpy(out, in, len);
		return len;
	}
	memcpy(out, in, head);
	memcpy(out + head, val, vl);
	memcpy(out + head + vl, end, tail);
	return head + vl + tail;
}

/* Attributes worth corrupting, per format (NULL-terminated). */
static const char *const hwloc_attrs[] = {
	"cpuset=\"",	   "nodeset=\"",    "os_index=\"", "pci_busid=\"",
	"pci_type=\"",	   "bridge_pci=\"", "depth=\"",	   "nbobjs=\"",
	"local_memory=\"", "type=\"",	    NULL
};
static const char *const nccl_attrs[] = {
	"busid=\"",  "class=\"", "numaid=\"", "affinity=\"",
	"target=\"", "count=\"", "tclass=\"", "vendor=\"",
	"device=\"", "name=\"",	 NULL
};

static size_t mutate(char *out, size_t cap, const char *in, size_t len,
		     const char *const *attrs)
{
	static const char *const vals[] = {
		"0xffffffff,0xffffffff,0xffffffff,0xffffffff,0xffffffff,"
		"0xffffffff,0xffffffff,0xffffffff,0xffffffff,0xffffffff,"
		"0xffffffff,0xffffffff,0xffffffff,0xffffffff,0xffffffff,"
		"0xffffffff,0xffffffff,0xffffffff,0xffffffff,0xffffffff,"
		"0xffffffff,0xffffffff,0xffffffff,0xffffffff,0xffffffff,"
		"0xffffffff,0xffffffff,0xffffffff,0xffffffff,0xffffffff,"
		"0xffffffff,0xffffffff,0xffffffff,0xffffffff,0xffffffff",
		"4294967295",
		"-1",
		"",
		"0x",
		"zz:zz:zz.z",
		"0302 [10de:2330] [0000:0000] a1",
		"99999999999999999999",
		"PCIDev",
		"Bridge",
		"0-1",
		"1-1",
	};
	size_t n;
	switch (next() % 6) {
	case 0: /* truncate */
		n = pick(len);
		memcpy(out, in, n);
		return n;
	case 1: /* flip bytes */
		memcpy(out, in, len);
		for (int i = 0; i < 1 + (int)pick(8); i++)
			out[pick(len)] ^= (char)(1 << pick(8));
		return len;
	case 2: { /* delete a range */
		size_t a = pick(len),
		       b = a + pick(len - a < 2000 ? len - a : 2000);
		memcpy(out, in, a);
		memcpy(out + a, in + b, len - b);
		return len - (b - a);
	}
	case 3: { /* duplicate a range */
		size_t a = pick(len), l = pick(len - a < 4000 ? len - a : 4000);
		if (len + l > cap)
			l = 0;
		memcpy(out, in, a + l);
		memcpy(out + a + l, in + a, len - a);
		return len + l;
	}
	default: /* an attribute set to something hostile */
	{
		size_t na = 0;
		while (attrs[na])
			na++;
		return set_attr(out, cap, in, len, attrs[pick(na)],
				vals[pick(sizeof(vals) / sizeof(vals[0]))]);
	}
	}
}

static int load_hwloc(struct gf_node *n, const char *buf, size_t len,
		      struct gf_err *e)
{
	struct gf_topo_source src = { .xml_buf = buf, .xml_len = len };
	return gf_topo_load(n, &src, e);
}

static int load_nccl(struct gf_node *n, const char *buf, size_t len,
		     struct gf_err *e)
{
	return gf_nccl_xml_load(n, NULL, buf, len, "<mutated>", e);
}

struct format {
	const char *name; /* fuzz/NAME */
	const char *const *files;
	const char *const *attrs;
	int (*load)(struct gf_node *n, const char *buf, size_t len,
		    struct gf_err *e);
};

/* 0 ok, 1 failures, -1 shared data absent */
static int run(const struct format *fm, const char *shared, int per)
{
	int loaded = 0, rejected = 0, bad = 0, inputs = 0;
	for (size_t f = 0; fm->files[f]; f++) {
		char path[1024];
		size_t len;
		snprintf(path, sizeof(path), "%s/%s", shared, fm->files[f]);
		char *in = slurp(path, &len);
		if (in == NULL) {
			printf("skip fuzz/%s (shared data absent: %s)\n",
			       fm->name, path);
			return -1;
		}
		inputs++;
		size_t cap = len * 2 + 8192;
		char *out = malloc(cap);
		for (int i = 0; i < per; i++) {
			size_t n = mutate(out, cap, in, len, fm->attrs);
			const char *dump = getenv("XML_MUTATE_DUMP");
			char tag[64];
			snprintf(tag, sizeof(tag), "%s:%zu:%d", fm->name, f, i);
			if (dump && strcmp(dump, tag) == 0) {
				/* reproduce a failure: write the input out */
				FILE *d = fopen("xml_mutate.dump.xml", "wb");
				if (d) {
					fwrite(out, 1, n, d);
					fclose(d);
				}
			}
			struct gf_node *node = gf_node_new();
			struct gf_err e;
			gf_err_clear(&e);
			int rc = fm->load(node, out, n, &e);
			char msg[256];
			if (rc == 0) {
				loaded++;
				if (gf_node_check(node, msg, sizeof(msg))) {
					printf("  %s #%d: loaded an "
					       "inconsistent node: %s\n",
					       fm->files[f], i, msg);
					bad++;
				}
			} else if (rc < 0 && e.msg[0] != '\0' &&
				   strchr(e.msg, '\n') == NULL) {
				rejected++;
			} else {
				printf("  %s #%d: rc=%d without a one-line "
				       "message: '%s'\n",
				       fm->files[f], i, rc, e.msg);
				bad++;
			}
			gf_node_free(node);
		}
		free(out);
		free(in);
	}
	printf("%s fuzz/%s (%d mutated files from %d: %d loaded, %d "
	       "rejected with a message)\n",
	       bad ? "FAIL" : "ok", fm->name, loaded + rejected + bad, inputs,
	       loaded, rejected);
	return bad ? 1 : 0;
}

int main(int argc, char **argv)
{
	static const char *const hwloc_files[] = {
		"topologies/hwloc-xml/open-mpi_hwloc/nvidiaDGX2.xml",
		"topologies/hwloc-xml/open-mpi_hwloc/power8gpudistances.xml",
		"topologies/hwloc-xml/LLNL_mpibind/coral-lassen.xml",
		"topologies/hwloc-xml/LLNL_mpibind/g4dnmetal.xml",
		"topologies/synthetic/hgx-h100-like-synthetic.xml",
		"topologies/synthetic/dgx-a100-like-synthetic.xml",
		NULL,
	};
	static const char *const nccl_files[] = {
		"topologies/synthetic/dgx1v-cubemesh-nccl-synthetic.xml",
		"topologies/nccl-topo-xml/Azure_azhpc-images/ndv4-topo.xml",
		"topologies/nccl-topo-xml/Azure_azhpc-images/ncv4-topo.xml",
		"topologies/nccl-topo-xml/aws_aws-ofi-nccl/p4d-24xl-topo.xml",
		"topologies/nccl-topo-xml/ROCm_rccl/topo_8p_940.xml",
		"topologies/nccl-topo-xml/aliyun_SimAI/topo_8A100_4CX6.xml",
		NULL,
	};
	static const struct format formats[] = {
		{ "xml-mutations", hwloc_files, hwloc_attrs, load_hwloc },
		{ "nccl-xml-mutations", nccl_files, nccl_attrs, load_nccl },
	};
	if (argc < 2) {
		fprintf(stderr, "usage: xml_mutate SHARED_DIR [COUNT]\n");
		return 2;
	}
	int per = argc > 2 ? atoi(argv[2]) : 50;
	setenv("HWLOC_HIDE_ERRORS", "2", 0);
	int fail = 0;
	for (size_t i = 0; i < sizeof(formats) / sizeof(formats[0]); i++)
		fail |= run(&formats[i], argv[1], per) > 0;
	return fail;
}
