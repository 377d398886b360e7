#include "tui/graph.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/util.h"

void bt_canvas_init(struct bt_canvas *cv, int w, int h)
{
    cv->w = w > 0 ? w : 0;
    cv->h = h > 0 ? h : 0;
    cv->c = bt_xcalloc((size_t)cv->w * (size_t)cv->h + 1, sizeof *cv->c);
}

void bt_canvas_free(struct bt_canvas *cv)
{
    free(cv->c);
    cv->c = NULL;
    cv->w = cv->h = 0;
}

void bt_canvas_set(struct bt_canvas *cv, int x, int y, uint32_t ch, unsigned char role)
{
    if (x < 0 || y < 0 || x >= cv->w || y >= cv->h)
        return;
    cv->c[y * cv->w + x] = (struct bt_cell){ch, role};
}

const struct bt_cell *bt_canvas_get(const struct bt_canvas *cv, int x, int y)
{
    if (x < 0 || y < 0 || x >= cv->w || y >= cv->h)
        return NULL;
    return &cv->c[y * cv->w + x];
}

size_t bt_utf8_encode(uint32_t cp, char *o)
{
    if (cp < 0x80) {
        o[0] = (char)cp;
        return 1;
    }
    if (cp < 0x800) {
        o[0] = (char)(0xC0 | (cp >> 6));
        o[1] = (char)(0x80 | (cp & 0x3F));
        return 2;
    }
    if (cp < 0x10000) {
        o[0] = (char)(0xE0 | (cp >> 12));
        o[1] = (char)(0x80 | ((cp >> 6) & 0x3F));
        o[2] = (char)(0x80 | (cp & 0x3F));
        return 3;
    }
    o[0] = (char)(0xF0 | (cp >> 18));
    o[1] = (char)(0x80 | ((cp >> 12) & 0x3F));
    o[2] = (char)(0x80 | ((cp >> 6) & 0x3F));
    o[3] = (char)(0x80 | (cp & 0x3F));
    return 4;
}

size_t bt_canvas_row_utf8(const struct bt_canvas *cv, int y, char *out, size_t n)
{
    size_t len = 0;
    if (n == 0)
        return 0;
    for (int x = 0; y >= 0 && y < cv->h && x < cv->w; x++) {
        char enc[5];
        uint32_t ch = cv->c[y * cv->w + x].ch;
        size_t k = bt_utf8_encode(ch ? ch : ' ', enc);
        if (len + k >= n)
            break;
        memcpy(out + len, enc, k);
        len += k;
    }
    out[len] = '\0';
    return len;
}

int bt_graph_points(int w, bool utf8)
{
    return utf8 ? 2 * w : w;
}

/* A w x h grid of braille dots (2x4 per cell) or ASCII glyphs, with a role per cell. */
struct grid {
    int w, h;
    bool utf8;
    unsigned char *bits;   /* braille dot bits per cell */
    uint32_t *ascii;       /* ASCII glyph per cell */
    int *role;             /* -1: none */
};

static void grid_init(struct grid *g, int w, int h, bool utf8)
{
    g->w = w;
    g->h = h;
    g->utf8 = utf8;
    size_t n = (size_t)w * (size_t)h + 1;
    g->bits = bt_xcalloc(n, 1);
    g->ascii = bt_xcalloc(n, sizeof *g->ascii);
    g->role = bt_xmalloc(n * sizeof *g->role);
    for (size_t i = 0; i < n; i++)
        g->role[i] = -1;
}

/* Pixel (px, py) in braille space, or cell (px, py) in ASCII space. */
static void grid_dot(struct grid *g, int px, int py, uint32_t ascii, int role, bool weak)
{
    static const unsigned char dot[2][4] = {{0x01, 0x02, 0x04, 0x40}, {0x08, 0x10, 0x20, 0x80}};
    int cx = g->utf8 ? px / 2 : px, cy = g->utf8 ? py / 4 : py;
    if (px < 0 || py < 0 || cx >= g->w || cy >= g->h)
        return;
    size_t i = (size_t)cy * (size_t)g->w + (size_t)cx;
    if (g->utf8)
        g->bits[i] |= dot[px % 2][py % 4];
    else if (!weak || !g->ascii[i])
        g->ascii[i] = ascii;
    if (!weak || g->role[i] < 0)
        g->role[i] = role;
}

static void grid_flush(struct grid *g, struct bt_canvas *cv, int x, int y)
{
    for (int cy = 0; cy < g->h; cy++) {
        for (int cx = 0; cx < g->w; cx++) {
            size_t i = (size_t)cy * (size_t)g->w + (size_t)cx;
            if (g->role[i] < 0)
                continue;
            uint32_t ch = g->utf8 ? 0x2800u + g->bits[i] : g->ascii[i];
            if (ch && ch != 0x2800u)
                bt_canvas_set(cv, x + cx, y + cy, ch, (unsigned char)g->role[i]);
        }
    }
    free(g->bits);
    free(g->ascii);
    free(g->role);
}

/* Pixel row of value v: 0 at the bottom, ymax at the top, clamped. */
static int ypix(double v, double ymax, int ph)
{
    double f = ymax > 0 ? v / ymax : 0;
    if (f < 0)
        f = 0;
    if (f > 1)
        f = 1;
    return (ph - 1) - (int)lround(f * (ph - 1));
}

void bt_graph_plot(struct bt_canvas *cv, int x, int y, int w, int h,
                   const struct bt_plot_series *s, int ns, double ymax, bool utf8)
{
    if (w <= 0 || h <= 0)
        return;
    struct grid g;
    grid_init(&g, w, h, utf8);
    int pw = utf8 ? 2 * w : w, ph = utf8 ? 4 * h : h;
    /* levels first and weak, so a series crossing the quota line keeps its color */
    for (int k = 0; k < ns; k++) {
        if (s[k].kind != BT_SER_LEVEL || isnan(s[k].level) || s[k].level > ymax)
            continue;
        int py = ypix(s[k].level, ymax, ph);
        for (int px = 0; px < pw; px++)
            if (!utf8 || px % 3 != 2) /* dashed, so it reads as a limit, not data */
                grid_dot(&g, px, py, '-', s[k].role, true);
    }
    for (int k = 0; k < ns; k++) {
        if (s[k].kind != BT_SER_LINE || !s[k].v)
            continue;
        int count = s[k].n < pw ? s[k].n : pw;
        int prev = -1;
        for (int i = 0; i < count; i++) {
            double v = s[k].v[s[k].n - count + i];
            int px = pw - count + i;
            if (isnan(v)) {
                prev = -1;
                continue;
            }
            int py = ypix(v, ymax, ph);
            int a = prev < 0 ? py : (prev < py ? prev : py);
            int b = prev < 0 ? py : (prev < py ? py : prev);
            if (!utf8)
                a = b = py; /* ASCII: one glyph per column reads better than a smear */
            for (int q = a; q <= b; q++)
                grid_dot(&g, px, q, (uint32_t)(unsigned char)s[k].ascii, s[k].role, false);
            prev = py;
        }
    }
    grid_flush(&g, cv, x, y);
}

int bt_graph_row(double v, double ymax, int h)
{
    return ypix(v, ymax, h);
}

void bt_graph_dots(struct bt_canvas *cv, int x, int y, int w, int h,
                   const struct bt_plot_series *s, int ns, double ymax, bool utf8,
                   unsigned char over_role)
{
    if (w <= 0 || h <= 0)
        return;
    int *owner = calloc((size_t)w * (size_t)h, sizeof *owner); /* 1 + series index */
    if (!owner)
        return;
    for (int k = 0; k < ns; k++) {
        if (s[k].kind != BT_SER_LEVEL || isnan(s[k].level) || s[k].level > ymax)
            continue;
        int py = ypix(s[k].level, ymax, h);
        uint32_t g = utf8 && s[k].glyph ? s[k].glyph : (uint32_t)(unsigned char)s[k].ascii;
        for (int px = 0; px < w; px++) /* a dashed glyph: it reads as a limit, not data */
            bt_canvas_set(cv, x + px, y + py, g, s[k].role);
        /* crossings: a column whose value lies above the level */
        for (int j = 0; j < ns; j++) {
            bool floor = s[k].below, up = s[k].above || s[j].over;
            if (s[j].kind != BT_SER_LINE || !s[j].v || !(floor || up))
                continue;
            int count = s[j].n < w ? s[j].n : w;
            for (int i = 0; i < count; i++) {
                double v = s[j].v[s[j].n - count + i];
                if (!isnan(v) && ((floor && v < s[k].level) || (up && v > s[k].level)))
                    bt_canvas_set(cv, x + w - count + i, y + py, '!', over_role);
            }
        }
    }
    for (int k = 0; k < ns; k++) {
        if (s[k].kind != BT_SER_LINE || !s[k].v)
            continue;
        uint32_t g = utf8 && s[k].glyph ? s[k].glyph : (uint32_t)(unsigned char)s[k].ascii;
        int count = s[k].n < w ? s[k].n : w;
        for (int i = 0; i < count; i++) {
            double v = s[k].v[s[k].n - count + i];
            if (isnan(v))
                continue;
            int px = w - count + i, py = ypix(v, ymax, h);
            int *o = &owner[py * w + px];
            uint32_t cg = g;
            if (s[k].merge_with && *o == s[k].merge_with)
                cg = s[k].merge_glyph;
            bt_canvas_set(cv, x + px, y + py, cg, s[k].role);
            *o = k + 1;
        }
    }
    free(owner);
}

void bt_graph_bars(struct bt_canvas *cv, int x, int y, int w, int h, const double *v, int n,
                   double ymax, unsigned char role, bool utf8)
{
    if (w <= 0 || h <= 0)
        return;
    int count = n < w ? n : w;
    for (int i = 0; i < count; i++) {
        double val = v[n - count + i];
        int cx = x + w - count + i;
        if (isnan(val) || val <= 0)
            continue;
        double f = ymax > 0 ? val / ymax : 1;
        if (f > 1)
            f = 1;
        if (utf8) {
            long eighths = lround(f * h * 8);
            if (eighths < 1)
                eighths = 1; /* nonzero must never look like zero */
            for (int r = 0; r < h && eighths > 0; r++, eighths -= 8) {
                uint32_t ch = eighths >= 8 ? 0x2588u : 0x2580u + (uint32_t)eighths;
                bt_canvas_set(cv, cx, y + h - 1 - r, ch, role);
            }
        } else {
            long rows = lround(f * h);
            if (rows < 1) {
                bt_canvas_set(cv, cx, y + h - 1, '_', role);
                continue;
            }
            for (int r = 0; r < rows && r < h; r++)
                bt_canvas_set(cv, cx, y + h - 1 - r, '#', role);
        }
    }
}

void bt_graph_scatter(struct bt_canvas *cv, int x, int y, int w, int h, const double *xs,
                      const double *ys, int n, double xmax, double ymax, unsigned char role,
                      double mark_x, unsigned char mark_role, bool utf8)
{
    if (w <= 0 || h <= 0)
        return;
    struct grid g;
    grid_init(&g, w, h, utf8);
    int pw = utf8 ? 2 * w : w, ph = utf8 ? 4 * h : h;
    if (!isnan(mark_x) && xmax > 0) {
        int px = (int)lround(fmin(fmax(mark_x / xmax, 0), 1) * (pw - 1));
        for (int py = 0; py < ph; py++)
            if (!utf8 || py % 2 == 0)
                grid_dot(&g, px, py, '|', mark_role, true);
    }
    for (int i = 0; i < n; i++) {
        if (isnan(xs[i]) || isnan(ys[i]) || xmax <= 0)
            continue;
        int px = (int)lround(fmin(fmax(xs[i] / xmax, 0), 1) * (pw - 1));
        grid_dot(&g, px, ypix(ys[i], ymax, ph), '*', role, false);
    }
    grid_flush(&g, cv, x, y);
}

uint32_t bt_graph_seg_glyph(enum bt_seg s, bool utf8)
{
    static const uint32_t u[BT_SEG_COUNT + 1] = {0x2588, 0x2593, 0x2592, 0x00B7};
    static const uint32_t a[BT_SEG_COUNT + 1] = {'#', '=', ':', '.'};
    if ((int)s < 0 || s > BT_SEG_COUNT)
        s = BT_SEG_COUNT;
    return utf8 ? u[s] : a[s];
}

bool bt_graph_hbar(struct bt_canvas *cv, int x, int y, int w, const double v[BT_SEG_COUNT],
                   double total, const unsigned char roles[BT_SEG_COUNT],
                   unsigned char empty_role, unsigned char over_role, bool utf8)
{
    if (w <= 0 || isnan(total) || total <= 0)
        return false;
    bool over = false;
    for (int k = 0; k < BT_SEG_COUNT; k++)
        if (!isnan(v[k]) && v[k] > total)
            over = true;
    for (int i = 0; i < w; i++) {
        /* a cell belongs to a segment when the segment covers its middle */
        double mid = (i + 0.5) / w * total;
        enum bt_seg seg = BT_SEG_COUNT;
        for (int k = 0; k < BT_SEG_COUNT; k++) {
            if (!isnan(v[k]) && v[k] >= mid) {
                seg = (enum bt_seg)k;
                break;
            }
        }
        unsigned char role = seg == BT_SEG_COUNT ? empty_role : roles[seg];
        bt_canvas_set(cv, x + i, y, bt_graph_seg_glyph(seg, utf8), role);
    }
    if (over)
        bt_canvas_set(cv, x + w - 1, y, '!', over_role);
    return true;
}
