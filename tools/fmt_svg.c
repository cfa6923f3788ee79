/*
 * hookit export --format=svg: a self-contained interactive flame graph.
 *
 * One SVG file, no external resources: every frame is an element of the
 * document (so it is there without scripting, and a test can count them),
 * and a small embedded script adds the interaction: hovering a frame shows
 * its name, module, calls, inclusive and exclusive time and their share of
 * the thread; a click zooms into the frame (its ancestors stay, full width,
 * below it); the search box highlights matching frames (a regular
 * expression) and shows the share they cover; "Reset zoom" or Escape undoes.
 * FILE.svg#search=RE and FILE.svg#zoom=N (the Nth frame in document order)
 * open the graph in that state.
 *
 * Roots are at the bottom; a frame's width is its inclusive time (or, with
 * --weight, the time on the CPU, the time waiting or the calls in its
 * subtree: tools/waittime.h); children are in name order,
 * left to right.  Each thread is a section of its own (one with
 * --merge-threads or --thread).  Frames narrower than 0.1 pixel at full
 * width are left out, with their subtrees.
 */
#include "tools/cli.h"
#include "tools/export_opts.h"
#include "tools/tree.h"
#include "tools/units.h"
#include "profile/waittime.h"

#include <stdlib.h>
#include <string.h>

#define SVG_WIDTH   1200
#define FRAME_H     17
#define MARGIN      10
#define HEADER_H    64
#define SECTION_GAP 36
#define MIN_WIDTH_PX 0.1
#define CHAR_PX     7.0         /* average glyph width of the 12px font, for labels */

/* Print s as XML character data: markup escaped, control characters and
 * invalid UTF-8 replaced by '?', so the document is always well-formed. */
static void put_xml(FILE *out, const char *s, size_t max_chars)
{
    const unsigned char *p = (const unsigned char *)(s ? s : "");
    size_t chars = 0;
    while (*p && chars < max_chars) {
        unsigned c = *p;
        size_t len = c < 0x80 ? 1 : (c >> 5) == 6 ? 2 : (c >> 4) == 14 ? 3 : (c >> 3) == 30 ? 4 : 0;
        int ok = len > 0;
        for (size_t i = 1; ok && i < len; i++)
            ok = (p[i] & 0xc0) == 0x80;
        if (ok && len == 2 && c < 0xc2)
            ok = 0;             /* overlong */
        chars++;
        if (!ok) {
            fputc('?', out);
            p++;
            continue;
        }
        if (len > 1) {
            fwrite(p, 1, len, out);
        } else if (c == '&') {
            fputs("&amp;", out);
        } else if (c == '<') {
            fputs("&lt;", out);
        } else if (c == '>') {
            fputs("&gt;", out);
        } else if (c == '"') {
            fputs("&quot;", out);
        } else if (c == '\'') {
            fputs("&apos;", out);
        } else if (c < 0x20 || c == 0x7f) {
            fputc('?', out);
        } else {
            fputc((int)c, out);
        }
        p += len;
    }
    if (*p)
        fputs("..", out);
}

/* Warm colours from the name, stable across runs (flamegraph.pl's idea). */
static void colour(const char *name, unsigned rgb[3])
{
    uint32_t h = 2166136261u;
    for (const unsigned char *p = (const unsigned char *)(name ? name : ""); *p; p++)
        h = (h ^ *p) * 16777619u;
    rgb[0] = 205 + (h % 50);
    rgb[1] = 60 + ((h >> 8) % 170);
    rgb[2] = 40 + ((h >> 16) % 50);
}

struct section {
    FILE *out;
    const struct profile *p;
    const struct prof_thread *th;
    uint64_t *weight;           /* per node: width in weight units */
    double *x;                  /* per node: left edge, fraction of the total */
    uint64_t total;
    uint64_t total_ns;
    uint32_t max_depth;
    double y0;                  /* top of the section's frames */
    uint32_t nframes;
    struct waittime w; /* the thread's wait and CPU columns */
    int waits;         /* it has them: data-cpu, data-wait */
};

static void put_frame(struct section *s, const struct tree *t, uint32_t node)
{
    FILE *out = s->out;
    const struct prof_node *n = &s->th->nodes[node];
    const struct prof_func *f = tree_func(t, node);
    double w = s->total ? (double)s->weight[node] / (double)s->total : 0;
    double x = s->x[node];
    uint32_t d = t->depth[node];
    double y = s->y0 + (double)(s->max_depth - d) * FRAME_H;
    double px = w * (SVG_WIDTH - 2 * MARGIN);
    char incl[UNITS_BUF], excl[UNITS_BUF];
    unsigned rgb[3];
    colour(f->name, rgb);
    double ipct = s->total_ns ? 100.0 * (double)n->incl_ns / (double)s->total_ns : 0;
    double epct = s->total_ns ? 100.0 * (double)n->excl_ns / (double)s->total_ns : 0;
    fprintf(out, "<g class=\"f\" data-x=\"%.9f\" data-w=\"%.9f\" data-d=\"%u\" data-n=\"", x, w, d);
    put_xml(out, f->name, 4096);
    fputs("\" data-m=\"", out);
    put_xml(out, f->module, 4096);
    fprintf(out, "\" data-c=\"%llu\" data-i=\"%s\" data-ip=\"%.2f\" data-e=\"%s\" data-ep=\"%.2f\"",
            (unsigned long long)n->calls, units_ns(n->incl_ns, incl), ipct, units_ns(n->excl_ns, excl), epct);
    /* the exclusive time on the CPU and waiting, when the profile has them */
    char cpu[UNITS_BUF] = "", wait[UNITS_BUF] = "";
    if (s->waits) {
        units_ns(waittime_cpu(&s->w, s->th, node), cpu);
        units_ns(waittime_wait(&s->w, node), wait);
        fprintf(out, " data-cpu=\"%s\" data-wait=\"%s\"", cpu, wait);
    }
    fputs("><title>", out);
    put_xml(out, f->name, 4096);
    fprintf(out, " (%llu calls, %s incl %.2f%%, %s excl %.2f%%", (unsigned long long)n->calls, incl, ipct,
            excl, epct);
    if (s->waits)
        fprintf(out, ": cpu %s, wait %s", cpu, wait);
    fputs(")</title>", out);
    fprintf(out, "<rect x=\"%.2f\" y=\"%.1f\" width=\"%.2f\" height=\"%d\" rx=\"2\" "
            "fill=\"rgb(%u,%u,%u)\"/>", MARGIN + x * (SVG_WIDTH - 2 * MARGIN), y, px,
            FRAME_H - 1, rgb[0], rgb[1], rgb[2]);
    fprintf(out, "<text x=\"%.2f\" y=\"%.1f\">", MARGIN + x * (SVG_WIDTH - 2 * MARGIN) + 3,
            y + FRAME_H - 5);
    size_t fit = px > 3 * CHAR_PX ? (size_t)((px - 6) / CHAR_PX) : 0;
    if (fit >= 3)
        put_xml(out, f->name, fit - 2);
    fputs("</text></g>\n", out);
    s->nframes++;
}

struct layout_ctx {
    struct section *s;
    double min_w;
    uint8_t *hidden;
};

static void lay_out(const struct tree *t, uint32_t node, void *vctx)
{
    struct layout_ctx *c = vctx;
    struct section *s = c->s;
    const struct prof_node *n = &s->th->nodes[node];
    uint32_t par = n->parent;
    if (par != PROF_NONE && c->hidden[par]) {
        c->hidden[node] = 1;
        return;
    }
    double w = s->total ? (double)s->weight[node] / (double)s->total : 0;
    if (w < c->min_w) {
        c->hidden[node] = 1;
        return;
    }
    put_frame(s, t, node);
    /* children start at this frame's left edge, in the sorted order */
    double x = s->x[node];
    for (uint32_t i = 0; i < tree_nchildren(t, node); i++) {
        uint32_t ch = tree_children(t, node)[i];
        s->x[ch] = x;
        x += s->total ? (double)s->weight[ch] / (double)s->total : 0;
    }
}

static int by_name(const struct tree *t, uint32_t a, uint32_t b)
{
    const char *na = tree_func(t, a)->name, *nb = tree_func(t, b)->name;
    int c = strcmp(na ? na : "", nb ? nb : "");
    return c ? c : (a < b ? -1 : a > b);
}

static const char *const svg_widths[] = {
    [WEIGHT_TIME] = "widths are inclusive time",
    [WEIGHT_CALLS] = "widths are calls",
    [WEIGHT_CPU] = "widths are time on the CPU",
    [WEIGHT_WAIT] = "widths are time waiting",
};

static int write_section(FILE *out, const struct profile *p, const struct prof_thread *th,
                         double *y)
{
    struct tree t;
    if (tree_build(&t, p, th) != 0)
        return -1;
    tree_sort(&t, by_name);
    struct section s = { out,
                         p,
                         th,
                         calloc((size_t)th->nnodes + 1, sizeof(uint64_t)),
                         calloc((size_t)th->nnodes + 1, sizeof(double)),
                         0,
                         0,
                         0,
                         0,
                         0,
                         { 0 },
                         0 };
    uint8_t *hidden = calloc((size_t)th->nnodes + 1, 1);
    if (!s.weight || !s.x || !hidden) {
        free(s.weight);
        free(s.x);
        free(hidden);
        tree_free(&t);
        return -1;
    }
    uint64_t *sub = waittime_subtree(th, export_options.weight);
    if (!sub) {
        free(s.weight);
        free(s.x);
        free(hidden);
        tree_free(&t);
        return -1;
    }
    memcpy(s.weight, sub, (size_t)th->nnodes * sizeof *sub);
    free(sub);
    double x = 0;
    for (uint32_t i = 0; i < tree_nchildren(&t, t.n); i++)
        s.total += s.weight[tree_children(&t, t.n)[i]];
    for (uint32_t i = 0; i < tree_nchildren(&t, t.n); i++) {
        uint32_t r = tree_children(&t, t.n)[i];
        s.x[r] = x;
        x += s.total ? (double)s.weight[r] / (double)s.total : 0;
    }
    s.total_ns = thread_total_ns(th);
    s.waits = waittime_of(th, &s.w);
    for (uint32_t i = 0; i < th->nnodes; i++)
        if (t.depth[i] > s.max_depth)
            s.max_depth = t.depth[i];
    char total[UNITS_BUF];
    fprintf(out, "<g class=\"thread\" data-total=\"%llu\">\n<text class=\"ttitle\" x=\"%d\" y=\"%.1f\">",
            (unsigned long long)s.total, MARGIN, *y + 14);
    fprintf(out, "thread %u", th->index);
    if (th->name && *th->name) {
        fputs(" (", out);
        put_xml(out, th->name, 64);
        fputc(')', out);
    }
    fprintf(out, " tid %d: %s, %s</text>\n", th->tid, units_ns(s.total_ns, total),
            svg_widths[export_options.weight]);
    s.y0 = *y + 24;
    struct layout_ctx c = { &s, MIN_WIDTH_PX / (SVG_WIDTH - 2 * MARGIN), hidden };
    int rc = th->nnodes ? tree_walk(&t, lay_out, NULL, &c) : 0;
    fputs("</g>\n", out);
    *y = s.y0 + (double)(s.max_depth + 1) * FRAME_H + SECTION_GAP;
    free(s.weight);
    free(s.x);
    free(hidden);
    tree_free(&t);
    return rc;
}

/* The interaction.  Plain DOM calls only, so it runs in any browser that
 * shows SVG with scripts (Chromium, Firefox) when the file is opened
 * directly; frames are positioned from data-x/data-w (fractions). */
static const char script[] =
    "var W=%d,M=%d,CH=%.1f,zoomed=null;\n"
    "function $(id){return document.getElementById(id);}\n"
    "function A(e,n){return e.getAttribute(n);}\n"
    "function frames(){return document.querySelectorAll('g.f');}\n"
    "function label(g,px){var n=A(g,'data-n'),fit=Math.floor((px-6)/CH);\n"
    "  var t=g.querySelector('text');t.textContent=fit<3?'':(n.length<=fit?n:n.substring(0,fit-2)+'..');}\n"
    "function place(g,x,w){var r=g.querySelector('rect'),px=w*(W-2*M);\n"
    "  r.setAttribute('x',(M+x*(W-2*M)).toFixed(2));r.setAttribute('width',px.toFixed(2));\n"
    "  g.querySelector('text').setAttribute('x',(M+x*(W-2*M)+3).toFixed(2));label(g,px);}\n"
    "function zoom(g){var sec=g.parentNode,x0=+A(g,'data-x'),w0=+A(g,'data-w'),d0=+A(g,'data-d');\n"
    "  zoomed=g;var fs=sec.querySelectorAll('g.f');\n"
    "  for(var i=0;i<fs.length;i++){var f=fs[i],x=+A(f,'data-x'),w=+A(f,'data-w'),d=+A(f,'data-d');\n"
    "    var inside=x>=x0-1e-12&&x+w<=x0+w0+1e-12;\n"
    "    if(d>=d0&&inside){f.style.display='';place(f,(x-x0)/w0,w/w0);}\n"
    "    else "
    "if(d<d0&&x<=x0+1e-12&&x+w>=x0+w0-1e-12){f.style.display='';place(f,0,1);f.classList.add('parent');}\n"
    "    else f.style.display='none';}\n"
    "  $('reset').style.opacity=1;}\n"
    "function unzoom(){var fs=frames();zoomed=null;for(var i=0;i<fs.length;i++){var f=fs[i];\n"
    "  f.style.display='';f.classList.remove('parent');place(f,+A(f,'data-x'),+A(f,'data-w'));}\n"
    "  $('reset').style.opacity=0.4;}\n"
    "function info(g){return A(g,'data-n')+(A(g,'data-m')?'  ['+A(g,'data-m')+']':'')+'  calls "
    "'+A(g,'data-c')+\n"
    "  '  incl '+A(g,'data-i')+' ('+A(g,'data-ip')+'%%)  excl '+A(g,'data-e')+' ('+A(g,'data-ep')+'%%)'+\n"
    "  (A(g,'data-cpu')?'  cpu '+A(g,'data-cpu')+'  wait '+A(g,'data-wait'):'');}\n"
    "function show(g,ev){var tip=$('tip'),txt=$('tiptext'),s=info(g);$('details').textContent=s;\n"
    "  txt.textContent=s;var w=Math.min(s.length*CH+12,W-20),x=ev.clientX+12,y=ev.clientY+16;\n"
    "  if(x+w>W)x=Math.max(0,W-w-4);tip.setAttribute('transform','translate('+x+','+y+')');\n"
    "  $('tiprect').setAttribute('width',w);tip.style.visibility='visible';}\n"
    "function hide(){$('tip').style.visibility='hidden';$('details').textContent=' ';}\n"
    "function search(re){var fs=frames(),secs={},n=0;var rx=null;\n"
    "  try{rx=re?new RegExp(re):null;}catch(e){rx=null;}\n"
    "  var total=0,matched=0,sections=document.querySelectorAll('g.thread');\n"
    "  for(var i=0;i<fs.length;i++){var f=fs[i],m=rx&&rx.test(A(f,'data-n'));\n"
    "    f.classList.toggle('match',!!m);if(m)n++;}\n"
    "  for(var s=0;s<sections.length;s++){var sec=sections[s],ranges=[];\n"
    "    var ms=sec.querySelectorAll('g.f.match');\n"
    "    for(var j=0;j<ms.length;j++){var x=+A(ms[j],'data-x'),w=+A(ms[j],'data-w'),inner=false;\n"
    "      for(var k=0;k<ranges.length;k++)if(x>=ranges[k][0]-1e-12&&x+w<=ranges[k][1]+1e-12)inner=true;\n"
    "      if(!inner){ranges.push([x,x+w]);matched+=w;}}total+=1;}\n"
    "  $('matched').textContent=rx?('matched '+n+' frames, "
    "'+(100*matched/Math.max(total,1)).toFixed(2)+'%%'):'';}\n"
    "function hkInit(){var fs=frames();for(var i=0;i<fs.length;i++){(function(g){\n"
    "  g.addEventListener('mousemove',function(e){show(g,e);});\n"
    "  g.addEventListener('mouseout',hide);\n"
    "  g.addEventListener('click',function(e){zoom(g);e.stopPropagation();});})(fs[i]);}\n"
    "  $('reset').addEventListener('click',unzoom);\n"
    "  var box=$('search');if(box)box.addEventListener('input',function(){search(box.value);});\n"
    "  "
    "document.addEventListener('keydown',function(e){if(e.key==='Escape'){unzoom();if(box){box.value='';"
    "search('');}}});\n"
    "  unzoom();\n"
    "  /* file.svg#search=RE or #zoom=N (the Nth frame): links into a view */\n"
    "  var h=decodeURIComponent((location.hash||'').substring(1));\n"
    "  if(h.indexOf('search=')===0&&box){box.value=h.substring(7);search(box.value);}\n"
    "  if(h.indexOf('zoom=')===0&&fs[+h.substring(5)])zoom(fs[+h.substring(5)]);}\n"
    "window.addEventListener('load',hkInit);\n";

static int write_svg(FILE *out, const struct profile *p)
{
    /* The height depends on the sections: lay them out into a buffer first. */
    char *body = NULL;
    size_t body_len = 0;
    FILE *b = open_memstream(&body, &body_len);
    if (!b)
        return -1;
    double y = HEADER_H;
    int rc = 0;
    for (uint32_t k = 0; k < p->nthreads && rc == 0; k++)
        rc = write_section(b, p, &p->threads[k], &y);
    if (fclose(b) != 0)
        rc = -1;
    if (rc != 0) {
        free(body);
        return -1;
    }
    int height = (int)y + 40;
    fprintf(out, "<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"no\"?>\n"
            "<svg version=\"1.1\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" "
            "xmlns=\"http://www.w3.org/2000/svg\" xmlns:xhtml=\"http://www.w3.org/1999/xhtml\">\n",
            SVG_WIDTH, height, SVG_WIDTH, height);
    fputs("<style>\n"
          "text{font-family:Verdana,sans-serif;font-size:12px;fill:#000}\n"
          "g.f{cursor:pointer}g.f text{pointer-events:none;font-size:11px}\n"
          "g.f:hover rect{stroke:#000;stroke-width:0.7}\n"
          "g.f.match rect{fill:rgb(230,0,230)!important}\n"
          "g.f.parent rect{opacity:0.6}\n"
          "#title{font-size:17px;text-anchor:middle}\n"
          "#reset{cursor:pointer;fill:#2060c0}\n"
          ".ttitle{font-weight:bold}\n"
          "#tip{pointer-events:none}\n"
          "</style>\n<script type=\"text/ecmascript\"><![CDATA[\n", out);
    fprintf(out, script, SVG_WIDTH, MARGIN, CHAR_PX);
    fputs("]]></script>\n", out);
    fprintf(out, "<rect x=\"0\" y=\"0\" width=\"%d\" height=\"%d\" fill=\"#fbfbf6\"/>\n", SVG_WIDTH,
            height);
    fprintf(out, "<text id=\"title\" x=\"%d\" y=\"24\">hookit flame graph: ", SVG_WIDTH / 2);
    const char *exe = p->process.exe ? strrchr(p->process.exe, '/') : NULL;
    put_xml(out, exe ? exe + 1 : (p->process.exe ? p->process.exe : "?"), 200);
    fprintf(out, " (pid %d)</text>\n", p->process.pid);
    fprintf(out, "<text id=\"reset\" x=\"%d\" y=\"50\">Reset zoom</text>\n", MARGIN);
    fprintf(out, "<foreignObject x=\"%d\" y=\"34\" width=\"260\" height=\"26\">"
            "<xhtml:input id=\"search\" type=\"search\" placeholder=\"search (regular expression)\" "
            "style=\"width:240px;font-size:12px\"/></foreignObject>\n", SVG_WIDTH - 270);
    fprintf(out, "<text id=\"matched\" x=\"%d\" y=\"50\" text-anchor=\"end\"> </text>\n",
            SVG_WIDTH - 280);
    fwrite(body, 1, body_len, out);
    free(body);
    fprintf(out, "<text id=\"details\" x=\"%d\" y=\"%d\"> </text>\n", MARGIN, height - 14);
    fputs("<g id=\"tip\" style=\"visibility:hidden\"><rect id=\"tiprect\" width=\"10\" "
          "height=\"20\" rx=\"3\" fill=\"#ffffe0\" stroke=\"#888\"/>"
          "<text id=\"tiptext\" x=\"6\" y=\"14\"> </text></g>\n</svg>\n", out);
    return 0;
}

int export_svg(FILE *out, struct loaded_profile *profiles, size_t n)
{
    int owned;
    struct profile *p = export_select(profiles, n, &owned);
    if (!p)
        return -1;
    int rc = write_svg(out, p);
    if (rc)
        cli_fail("out of memory");
    if (owned)
        profile_free(p);
    return rc;
}
