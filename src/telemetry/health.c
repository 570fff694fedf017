/*
 * health.c - the GPU health state machine of health.h, and the table of
 * Xid codes it classifies by.
 *
 * The table's source is NVIDIA's Xid documentation: the catalog of Xids
 * for Ampere and newer with its "Resolution Bucket (Immediate Action)"
 * column (https://docs.nvidia.com/deploy/xid-errors/analyzing-xid-catalog.html)
 * and the per-Xid guidance of the Xid Errors page (r555,
 * https://docs.nvidia.com/deploy/xid-errors/index.html), whose names the
 * meanings below shorten.  What the guidance says decides the class:
 *   reset: "A GPU reset or node reboot is needed to clear this error"
 *     (48 double-bit ECC, 74 NVLink), "reset GPU(s) reporting the Xid"
 *     (61, 62 micro-controller breakpoint/halt, 123 SPI PMU write), "the
 *     affected GPU must be reset before applications can restart" (95),
 *     "Reset the GPU" (140), row remapping that takes effect only at a
 *     reset, or a recording failure that asks for a reboot (63, 64), "cold
 *     reset the system" (110), GSP firmware timeouts and errors (119, 120),
 *     a GPU that failed to initialise (143), the driver itself saying a
 *     recovery action is required (154), and a GPU off the bus (79).
 *     Two by our own judgement:
 *     92 (high single-bit ECC rate): NVIDIA asks for field diagnostics
 *       and RMA checks; a rate does not fall by waiting, and nobody can
 *       run diagnostics on a GPU that keeps getting work.
 *     94 (contained ECC error): NVIDIA says the application that hit it
 *       must restart, the others may run on, and "it is recommended to
 *       reset the GPU when convenient" to activate the row remap.  Until
 *       that reset the bad row stays in use, so new work could hit it
 *       again; taking no new work is what drains the GPU and makes the
 *       "convenient" moment come.  Running jobs are left alone.
 *   application: 13, 31, 43, 45, 68, 109, the Xids NVIDIA's
 *     k8s-device-plugin ignores as application errors
 *     (internal/rm/health.go) - the catalog's RESTART_APP for an error of
 *     the program, not the GPU.
 *   transient: the rest, and any code not in the table (a new driver's
 *     Xid is better taken as a possible fault that clears than ignored
 *     or held forever).
 */
#include "telemetry/health.h"

#include <stdio.h>
#include <string.h>
#include <time.h>

#include <gpufleet/err.h>

#include "util/fmt.h"

#define T GF_XID_TRANSIENT
#define R GF_XID_RESET
#define A GF_XID_APP

static const struct {
	unsigned char cls; /* enum gf_xid_class */
	const char *meaning;
} xid_table[GF_XID_CODES] = {
	[1] = { T, "invalid or corrupted push buffer stream" },
	[2] = { T, "invalid or corrupted push buffer stream" },
	[3] = { T, "invalid or corrupted push buffer stream" },
	[4] = { T, "invalid or corrupted push buffer stream" },
	[6] = { T, "invalid or corrupted push buffer stream" },
	[7] = { T, "invalid or corrupted push buffer address" },
	[8] = { T, "GPU stopped processing" },
	[9] = { T, "driver error programming GPU" },
	[11] = { T, "invalid or corrupted push buffer stream" },
	[12] = { T, "driver error handling GPU exception" },
	[13] = { A, "graphics engine exception" },
	[16] = { T, "display engine hung" },
	[18] = { T, "bus mastering disabled in PCI config space" },
	[19] = { T, "display engine error" },
	[20] = { T, "invalid or corrupted MPEG push buffer" },
	[21] = { T, "invalid or corrupted motion estimation push buffer" },
	[22] = { T, "invalid or corrupted video processor push buffer" },
	[24] = { T, "GPU semaphore timeout" },
	[25] = { T, "invalid or illegal push buffer stream" },
	[26] = { T, "framebuffer timeout" },
	[27] = { T, "video processor exception" },
	[28] = { T, "video processor exception" },
	[29] = { T, "video processor exception" },
	[30] = { T, "GPU semaphore access error" },
	[31] = { A, "GPU memory page fault" },
	[32] = { T, "invalid or corrupted push buffer stream" },
	[33] = { T, "internal micro-controller error" },
	[34] = { T, "video processor exception" },
	[35] = { T, "video processor exception" },
	[36] = { T, "video processor exception" },
	[37] = { T, "driver firmware error" },
	[38] = { T, "driver firmware error" },
	[42] = { T, "video processor exception" },
	[43] = { A, "GPU stopped processing" },
	[44] = { T, "graphics engine fault during context switch" },
	[45] = { A, "preemptive cleanup, due to previous errors" },
	[46] = { T, "GPU stopped processing" },
	[47] = { T, "video processor exception" },
	[48] = { R, "double-bit ECC error" },
	[54] = { T, "auxiliary power not connected to the board" },
	[56] = { T, "display engine error" },
	[57] = { T, "error programming video memory interface" },
	[58] = { T, "unstable video memory interface" },
	[59] = { T, "internal micro-controller error" },
	[60] = { T, "video processor exception" },
	[61] = { R, "internal micro-controller breakpoint" },
	[62] = { R, "internal micro-controller halt" },
	[63] = { R, "ECC page retirement or row remap recorded" },
	[64] = { R, "ECC page retirement or row remap failed" },
	[65] = { T, "video processor exception" },
	[66] = { T, "illegal access by driver" },
	[67] = { T, "illegal access by driver" },
	[68] = { A, "video decoder (NVDEC0) exception" },
	[69] = { T, "graphics engine class error" },
	[70] = { T, "copy engine (CE3) error" },
	[71] = { T, "copy engine (CE4) error" },
	[72] = { T, "copy engine (CE5) error" },
	[73] = { T, "video encoder (NVENC2) error" },
	[74] = { R, "NVLink error" },
	[75] = { T, "copy engine (CE6) error" },
	[76] = { T, "copy engine (CE7) error" },
	[77] = { T, "copy engine (CE8) error" },
	[78] = { T, "vGPU start error" },
	[79] = { R, "fell off the bus" },
	[80] = { T, "corrupted data sent to GPU" },
	[81] = { T, "VGA subsystem error" },
	[82] = { T, "JPEG decoder (NVJPG0) error" },
	[83] = { T, "video decoder (NVDEC1) error" },
	[84] = { T, "video decoder (NVDEC2) error" },
	[85] = { T, "copy engine (CE9) error" },
	[86] = { T, "optical flow accelerator exception" },
	[88] = { T, "video decoder (NVDEC3) error" },
	[89] = { T, "video decoder (NVDEC4) error" },
	[92] = { R, "high single-bit ECC error rate" },
	[93] = { T, "InfoROM wear limit exceeded (non-fatal)" },
	[94] = { R, "contained ECC error" },
	[95] = { R, "uncontained ECC error" },
	[96] = { T, "video decoder (NVDEC5) error" },
	[97] = { T, "video decoder (NVDEC6) error" },
	[98] = { T, "video decoder (NVDEC7) error" },
	[99] = { T, "JPEG decoder (NVJPG1) error" },
	[100] = { T, "JPEG decoder (NVJPG2) error" },
	[101] = { T, "JPEG decoder (NVJPG3) error" },
	[102] = { T, "JPEG decoder (NVJPG4) error" },
	[103] = { T, "JPEG decoder (NVJPG5) error" },
	[104] = { T, "JPEG decoder (NVJPG6) error" },
	[105] = { T, "JPEG decoder (NVJPG7) error" },
	[106] = { T, "SMBPBI test message" },
	[107] = { T, "SMBPBI test message (silent)" },
	[109] = { A, "context switch timeout" },
	[110] = { R, "security fault" },
	[111] = { T, "display bundle error" },
	[112] = { T, "display supervisor error" },
	[113] = { T, "DisplayPort link training error" },
	[114] = { T, "display pipeline underflow" },
	[115] = { T, "display core channel error" },
	[116] = { T, "display window channel error" },
	[117] = { T, "display cursor channel error" },
	[118] = { T, "display pixel pipeline error" },
	[119] = { R, "GSP RPC timeout" },
	[120] = { R, "GSP error" },
	[121] = { T, "C2C link error" },
	[122] = { T, "SPI PMU RPC read failure" },
	[123] = { R, "SPI PMU RPC write failure" },
	[124] = { T, "SPI PMU RPC erase failure" },
	[125] = { T, "InfoROM file system failure" },
	[137] = { T, "NVLink FLA privilege error" },
	[140] = { R, "unrecovered ECC error" },
	[143] = { R, "GPU initialization failure" },
	[154] = { R, "GPU recovery action changed (reset required)" },
};

#undef T
#undef R
#undef A

enum gf_xid_class gf_xid_class(unsigned code)
{
	if (code >= GF_XID_CODES || !xid_table[code].meaning)
		return GF_XID_TRANSIENT;
	return (enum gf_xid_class)xid_table[code].cls;
}

const char *gf_xid_meaning(unsigned code)
{
	if (code >= GF_XID_CODES || !xid_table[code].meaning)
		return "unknown Xid";
	return xid_table[code].meaning;
}

const char *gf_xid_class_name(enum gf_xid_class c)
{
	switch (c) {
	case GF_XID_RESET:
		return "reset";
	case GF_XID_APP:
		return "application";
	default:
		return "transient";
	}
}

/* --- the machine ----------------------------------------------------- */

static enum gf_health_state state_of(const struct gf_health_gpu *g)
{
	if (g->lost)
		return GF_HEALTH_LOST;
	if (g->reset_xid)
		return GF_HEALTH_RESET;
	if (g->recovering)
		return GF_HEALTH_RECOVERING;
	return GF_HEALTH_OK;
}

int gf_health_init(struct gf_health *h, int n, int64_t quiet_ms, int64_t now_ms)
{
	memset(h, 0, sizeof(*h));
	h->quiet_ms = quiet_ms > 0 ? quiet_ms : GF_HEALTH_QUIET_MS;
	if (n < 0 || quiet_ms < 0)
		return GF_EINVAL;
	if (n > GF_HEALTH_MAX_GPUS)
		return GF_ETOOBIG;
	h->n = n;
	for (int i = 0; i < n; i++)
		h->g[i].since_ms = now_ms;
	return 0;
}

/* Start (or restart) GPU g's quiet period for a cause at at_ms (xid 0:
 * it answered again). */
static void recover_from(const struct gf_health *h, struct gf_health_gpu *g,
			 unsigned xid, int64_t at_ms)
{
	int64_t until = at_ms + h->quiet_ms;
	if (!g->recovering || until > g->healthy_at_ms)
		g->healthy_at_ms = until;
	g->recovering = true;
	g->rec_xid = xid;
	g->rec_ms = at_ms;
}

/* After an event at at_ms: when health flipped, it did then. */
static void flipped(struct gf_health_gpu *g, bool was_healthy, int64_t at_ms)
{
	if ((state_of(g) == GF_HEALTH_OK) != was_healthy && at_ms > g->since_ms)
		g->since_ms = at_ms;
}

static void on_xid(const struct gf_health *h, struct gf_health_gpu *g,
		   unsigned code, int64_t at_ms)
{
	enum gf_xid_class c = gf_xid_class(code);
	g->xids++;
	g->by_class[c]++;
	g->last_xid = code;
	switch (c) {
	case GF_XID_APP:
		g->note = GF_NOTE_APP;
		g->note_xid = code;
		g->note_ms = at_ms;
		break;
	case GF_XID_RESET:
		if (!g->reset_xid) {
			g->reset_xid = code;
			g->reset_ms = at_ms;
		}
		break;
	default:
		recover_from(h, g, code, at_ms);
		break;
	}
}

enum event { EV_XID, EV_LOST, EV_BACK };

/* Event ev (with its Xid code) on GPU gpu at at_ms; when it flipped the
 * GPU's health, it did then (never after EV_BACK: the GPU recovers
 * first). */
static int event(struct gf_health *h, int gpu, enum event ev, unsigned code,
		 int64_t at_ms)
{
	if (gpu < 0 || gpu >= h->n)
		return GF_EINVAL;
	struct gf_health_gpu *g = &h->g[gpu];
	bool was = state_of(g) == GF_HEALTH_OK;
	if (ev == EV_XID) {
		on_xid(h, g, code, at_ms);
	} else if (ev == EV_LOST && !g->lost) {
		g->lost = true;
		g->lost_ms = at_ms;
	} else if (ev == EV_BACK && g->lost) {
		/* it was reset or re-attached to answer: what needed a
		 * reset is gone, and it proves itself for a quiet period */
		g->lost = false;
		g->reset_xid = 0;
		g->reset_ms = 0;
		recover_from(h, g, 0, at_ms);
	}
	flipped(g, was, at_ms);
	return 0;
}

int gf_health_xid(struct gf_health *h, int gpu, unsigned code, int64_t at_ms)
{
	return event(h, gpu, EV_XID, code, at_ms);
}

int gf_health_lost(struct gf_health *h, int gpu, int64_t at_ms)
{
	return event(h, gpu, EV_LOST, 0, at_ms);
}

int gf_health_back(struct gf_health *h, int gpu, int64_t at_ms)
{
	return event(h, gpu, EV_BACK, 0, at_ms);
}

void gf_health_tick(struct gf_health *h, int64_t now_ms)
{
	for (int i = 0; i < h->n; i++) {
		struct gf_health_gpu *g = &h->g[i];
		if (!g->recovering)
			continue;
		if (g->healthy_at_ms - now_ms > h->quiet_ms)
			g->healthy_at_ms =
				now_ms + h->quiet_ms; /* clock back */
		if (now_ms < g->healthy_at_ms)
			continue;
		bool was = state_of(g) == GF_HEALTH_OK;
		g->recovering = false;
		if (state_of(g) != GF_HEALTH_OK)
			continue; /* lost or waiting for a reset meanwhile */
		g->note = GF_NOTE_RECOVERED;
		g->note_xid = g->rec_xid;
		g->note_ms = g->rec_ms;
		flipped(g, was, g->healthy_at_ms);
	}
}

enum gf_health_state gf_health_state(const struct gf_health *h, int gpu)
{
	if (gpu < 0 || gpu >= h->n)
		return GF_HEALTH_LOST;
	return state_of(&h->g[gpu]);
}

bool gf_health_is_healthy(const struct gf_health *h, int gpu)
{
	return gf_health_state(h, gpu) == GF_HEALTH_OK;
}

const struct gf_health_gpu *gf_health_gpu(const struct gf_health *h, int gpu)
{
	return gpu < 0 || gpu >= h->n ? NULL : &h->g[gpu];
}

/* ms since the epoch as "2025-01-01T10:00:00Z" (UTC, to the second). */
static const char *utc(int64_t ms, char *buf, size_t size)
{
	time_t t = (time_t)(ms >= 0 ? ms / 1000 : (ms - 999) / 1000);
	struct tm tm;
	if (!gmtime_r(&t, &tm)) {
		gf_note(buf, size, "%lld ms", (long long)ms);
		return buf;
	}
	gf_note(buf, size, "%04d-%02d-%02dT%02d:%02d:%02dZ", tm.tm_year + 1900,
		tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec);
	return buf;
}

/* "xid 8" or "answering again": what a quiet period started from. */
static const char *cause(unsigned xid, char *buf, size_t size)
{
	if (xid)
		gf_note(buf, size, "xid %u", xid);
	else
		gf_note(buf, size, "answering again");
	return buf;
}

char *gf_health_reason(const struct gf_health *h, int gpu, char *out,
		       size_t size)
{
	char a[80], b[80], c[32];
	const struct gf_health_gpu *g = gf_health_gpu(h, gpu);
	if (size == 0)
		return out;
	out[0] = '\0';
	if (!g) {
		gf_note(out, size, "no such GPU");
		return out;
	}
	switch (state_of(g)) {
	case GF_HEALTH_LOST:
		gf_note(out, size, "fell off the bus (NVML: GPU is lost)");
		break;
	case GF_HEALTH_RESET:
		gf_note(out, size, "xid %u: %s (needs a GPU reset)",
			g->reset_xid, gf_xid_meaning(g->reset_xid));
		break;
	case GF_HEALTH_RECOVERING:
		gf_note(out, size, "recovering: %s at %s, healthy again at %s",
			cause(g->rec_xid, c, sizeof(c)),
			utc(g->rec_ms, a, sizeof(a)),
			utc(g->healthy_at_ms, b, sizeof(b)));
		break;
	case GF_HEALTH_OK:
		if (g->note == GF_NOTE_APP)
			gf_note(out, size,
				"xid %u: %s (application error; the GPU "
				"stays healthy)",
				g->note_xid, gf_xid_meaning(g->note_xid));
		else if (g->note == GF_NOTE_RECOVERED)
			gf_note(out, size,
				"recovered: %s at %s, healthy again at %s",
				cause(g->note_xid, c, sizeof(c)),
				utc(g->note_ms, a, sizeof(a)),
				utc(g->since_ms, b, sizeof(b)));
		break;
	}
	return out;
}

int gf_health_check(const struct gf_health *h, char *msg, size_t size)
{
	if (h->n < 0 || h->n > GF_HEALTH_MAX_GPUS || h->quiet_ms <= 0) {
		gf_note(msg, size, "%d GPUs, quiet period %lld ms", h->n,
			(long long)h->quiet_ms);
		return GF_EINVAL;
	}
	for (int i = 0; i < h->n; i++) {
		const struct gf_health_gpu *g = &h->g[i];
		uint64_t sum = 0;
		for (int c = 0; c < GF_XID_NCLASS; c++)
			sum += g->by_class[c];
		if (sum != g->xids) {
			gf_note(msg, size,
				"GPU %d: %llu Xids, %llu counted by class", i,
				(unsigned long long)g->xids,
				(unsigned long long)sum);
			return GF_EINVAL;
		}
		if (g->reset_xid &&
		    gf_xid_class(g->reset_xid) != GF_XID_RESET) {
			gf_note(msg, size,
				"GPU %d: waits for a reset for xid %u, which "
				"is not of the reset class",
				i, g->reset_xid);
			return GF_EINVAL;
		}
		if (g->recovering && g->rec_xid &&
		    gf_xid_class(g->rec_xid) != GF_XID_TRANSIENT) {
			gf_note(msg, size,
				"GPU %d: recovers from xid %u, which is not "
				"transient",
				i, g->rec_xid);
			return GF_EINVAL;
		}
	}
	return 0;
}
