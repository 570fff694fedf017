/*
 * html.c - the chargeback page (placeholder while the renderer is built).
 */
#include "chargeback/chargeback.h"

int gf_cb_render_html(const struct gf_cb_view *v,
		      const struct gf_charge_result *res,
		      const struct gf_charge_result *daily, struct gf_buf *out)
{
	(void)v;
	(void)res;
	(void)daily;
	return gf_buf_puts(out, "<!doctype html>\n");
}
