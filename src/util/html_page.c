/*
 * html_page.c - pieces of the self-contained HTML pages (util/html_page.h).
 */
#include "util/html_page.h"

#include <math.h>

void gf_html_esc(struct gf_buf *b, const char *s)
{
	static const char *const entity[128] = {
		['<'] = "&lt;",	  ['>'] = "&gt;",   ['&'] = "&amp;",
		['"'] = "&quot;", ['\''] = "&#39;",
	};
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;
		if (c < 128 && entity[c])
			gf_buf_puts(b, entity[c]);
		else
			gf_buf_putc(b, *s);
	}
}

void gf_html_head(struct gf_buf *b, const char *title, const char *extra_css)
{
	gf_buf_puts(b,
		    "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n"
		    "<meta charset=\"utf-8\">\n"
		    "<meta name=\"viewport\" content=\"width=device-width\">\n"
		    "<title>");
	gf_html_esc(b, title);
	gf_buf_puts(b, "</title>\n<style>\n"
		       "body{font-family:sans-serif;margin:24px;color:#222;"
		       "background:#fff;max-width:1000px}\n"
		       "h1{font-size:22px;margin:0 0 4px}\n"
		       "h2{font-size:17px;margin:28px 0 8px}\n"
		       ".sub{color:#666;font-size:13px}\n"
		       "table{border-collapse:collapse;font-size:13px;"
		       "width:100%}\n"
		       "th,td{padding:4px 8px;border-bottom:1px solid #eee;"
		       "text-align:right}\n"
		       "th:first-child,td:first-child{text-align:left}\n"
		       "th{background:#f5f5f5}\n"
		       ".legend span{display:inline-block;margin-right:14px;"
		       "font-size:12px}\n"
		       ".legend i{display:inline-block;width:11px;height:11px;"
		       "margin-right:4px;vertical-align:-1px}\n"
		       "svg text{font-family:sans-serif}\n");
	if (extra_css)
		gf_buf_puts(b, extra_css);
	gf_buf_puts(b, "</style>\n</head>\n<body>\n");
}

void gf_html_legend_item(struct gf_buf *b, const char *colour, const char *s)
{
	gf_buf_printf(b, "<span><i style=\"background:%s\"></i>", colour);
	gf_html_esc(b, s);
	gf_buf_puts(b, "</span>");
}

double gf_html_nice(double v)
{
	if (!(v > 0))
		return 1;
	double p = pow(10, floor(log10(v)));
	static const double steps[] = { 1, 2, 2.5, 5, 10 };
	for (size_t i = 0; i < sizeof(steps) / sizeof(steps[0]); i++)
		if (steps[i] * p >= v * 1.0000001)
			return steps[i] * p;
	return 10 * p;
}
