/* Graphs render into a cell canvas: read the cells back and compare with
 * glyphs worked out by hand from the braille/block encodings. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "tests/tap.h"
#include "tui/graph.h"

static const char *row(const struct bt_canvas *cv, int y)
{
    static char buf[1024];
    bt_canvas_row_utf8(cv, y, buf, sizeof buf);
    return buf;
}

int main(void)
{
    struct bt_canvas cv;
    char enc[8];

    /* UTF-8 encoder: U+2800 is E2 A0 80; U+00B7 is C2 B7 */
    size_t n = bt_utf8_encode(0x2800, enc);
    OK(n == 3 && (unsigned char)enc[0] == 0xE2 && (unsigned char)enc[1] == 0xA0 &&
           (unsigned char)enc[2] == 0x80, "U+2800 encodes as E2 A0 80");
    n = bt_utf8_encode(0xB7, enc);
    OK(n == 2 && (unsigned char)enc[0] == 0xC2 && (unsigned char)enc[1] == 0xB7, "U+00B7 as C2 B7");

    /* Braille line: 1 cell wide, 1 high = 2x4 pixels. Values 0 and 10 with ymax 10:
     * left column bottom dot (dot 7 = 0x40), right column top dot (dot 4 = 0x08), and the
     * rising step fills the right column: 0x08|0x10|0x20|0x80 = 0xB8; 0x40|0xB8 -> U+28F8. */
    bt_canvas_init(&cv, 1, 1);
    double up[2] = {0, 10};
    struct bt_plot_series s = {.kind = BT_SER_LINE, .v = up, .n = 2, .level = 0, .role = 3, .ascii = '*'};
    bt_graph_plot(&cv, 0, 0, 1, 1, &s, 1, 10, true);
    OK(bt_canvas_get(&cv, 0, 0)->ch == 0x28F8,
       "braille step 0->10 is U+28F8 (got U+%04X)", bt_canvas_get(&cv, 0, 0)->ch);
    OK(bt_canvas_get(&cv, 0, 0)->role == 3, "the cell takes the series role");
    bt_canvas_free(&cv);

    /* NAN is a gap: only the second point (top right, 0x08) is drawn. */
    bt_canvas_init(&cv, 1, 1);
    double gap[2] = {NAN, 10};
    s.v = gap;
    bt_graph_plot(&cv, 0, 0, 1, 1, &s, 1, 10, true);
    OK(bt_canvas_get(&cv, 0, 0)->ch == 0x2808, "NAN leaves a gap (got U+%04X)",
       bt_canvas_get(&cv, 0, 0)->ch);
    bt_canvas_free(&cv);

    /* ASCII twin: 4 columns x 3 rows, values 0,5,10,NAN with ymax 10: rows 2,1,0, none. */
    bt_canvas_init(&cv, 4, 3);
    double a4[4] = {0, 5, 10, NAN};
    s = (struct bt_plot_series){.kind = BT_SER_LINE, .v = a4, .n = 4, .level = 0, .role = 1, .ascii = '*'};
    struct bt_plot_series lv = {.kind = BT_SER_LEVEL, .v = NULL, .n = 0, .level = 5, .role = 2, .ascii = '-'};
    struct bt_plot_series both[2] = {lv, s};
    bt_graph_plot(&cv, 0, 0, 4, 3, both, 2, 10, false);
    STREQ(row(&cv, 0), "  * ", "ascii row 0");
    STREQ(row(&cv, 1), "-*--", "ascii row 1: the level line, the series wins its cell");
    STREQ(row(&cv, 2), "*   ", "ascii row 2");
    bt_canvas_free(&cv);

    /* Fewer values than points are right-aligned (newest at the right edge). */
    bt_canvas_init(&cv, 4, 1);
    double one[1] = {1};
    s = (struct bt_plot_series){.kind = BT_SER_LINE, .v = one, .n = 1, .level = 0, .role = 1, .ascii = 'o'};
    bt_graph_plot(&cv, 0, 0, 4, 1, &s, 1, 1, false);
    STREQ(row(&cv, 0), "   o", "a short series sits at the right");
    bt_canvas_free(&cv);

    /* Bars, 2 rows: value 3 of ymax 4 = 0.75 x 16 eighths = 12 -> a full block and U+2584
     * (four eighths); 1 of 4 = 4 eighths -> U+2584 in the bottom row only; 0.01 still shows
     * the lowest block U+2581. ASCII: 3/4 x 2 rows = 1.5 -> 2 rows of '#'. */
    bt_canvas_init(&cv, 3, 2);
    double bars[3] = {3, 1, 0.01};
    bt_graph_bars(&cv, 0, 0, 3, 2, bars, 3, 4, 5, true);
    STREQ(row(&cv, 0), "\u2584  ", "bar tops");
    STREQ(row(&cv, 1), "\u2588\u2584\u2581", "bar bottoms");
    bt_canvas_free(&cv);
    bt_canvas_init(&cv, 3, 2);
    bt_graph_bars(&cv, 0, 0, 3, 2, bars, 3, 4, 5, false);
    STREQ(row(&cv, 0), "#  ", "ascii bar tops");
    STREQ(row(&cv, 1), "##_", "ascii bar bottoms: nonzero never looks like zero");
    bt_canvas_free(&cv);

    /* Segmented used-vs-quota bar, 10 cells of 100: settled 30, estimated 50, reserved 80.
     * Cell i is covered when the value reaches its middle (i + 0.5) x 10:
     * settled covers 0..2, estimated 3..4, reserved 5..7, empty 8..9. */
    static const unsigned char roles[BT_SEG_COUNT] = {1, 2, 3};
    double v[BT_SEG_COUNT] = {30, 50, 80};
    bt_canvas_init(&cv, 10, 1);
    OK(bt_graph_hbar(&cv, 0, 0, 10, v, 100, roles, 4, 9, false), "hbar drawn");
    STREQ(row(&cv, 0), "###==:::..", "settled / estimated / reserved / empty");
    OK(bt_canvas_get(&cv, 4, 0)->role == 2 && bt_canvas_get(&cv, 9, 0)->role == 4,
       "segment roles");
    bt_canvas_free(&cv);

    /* Estimated below settled adds nothing; reserved above the quota marks the end '!'. */
    double v2[BT_SEG_COUNT] = {40, 20, 130};
    bt_canvas_init(&cv, 10, 1);
    bt_graph_hbar(&cv, 0, 0, 10, v2, 100, roles, 4, 9, true);
    STREQ(row(&cv, 0), "\u2588\u2588\u2588\u2588\u2592\u2592\u2592\u2592\u2592!",
          "over quota: reserved fills, last cell '!'");
    OK(bt_canvas_get(&cv, 9, 0)->role == 9, "the overflow mark has its own role");
    bt_canvas_free(&cv);

    /* No quota: nothing drawn, false returned. */
    bt_canvas_init(&cv, 5, 1);
    OK(!bt_graph_hbar(&cv, 0, 0, 5, v, NAN, roles, 4, 9, true), "unknown quota: no bar");
    STREQ(row(&cv, 0), "     ", "unknown quota leaves the cells empty");
    bt_canvas_free(&cv);

    /* Scatter with a knee marker, ASCII 5x2: points (0,0) (4,10) xmax 4 ymax 10, mark at 2. */
    bt_canvas_init(&cv, 5, 2);
    double xs[2] = {0, 4}, ys[2] = {0, 10};
    bt_graph_scatter(&cv, 0, 0, 5, 2, xs, ys, 2, 4, 10, 1, 2, 7, false);
    STREQ(row(&cv, 0), "  | *", "scatter top row");
    STREQ(row(&cv, 1), "* |  ", "scatter bottom row");
    bt_canvas_free(&cv);

    /* Drawing outside the canvas is ignored, never a crash. */
    bt_canvas_init(&cv, 2, 2);
    bt_canvas_set(&cv, -1, 0, 'x', 0);
    bt_canvas_set(&cv, 2, 5, 'x', 0);
    bt_graph_plot(&cv, 1, 1, 4, 4, &s, 1, 1, true);
    OK(bt_canvas_get(&cv, 2, 2) == NULL, "get outside is NULL");
    bt_canvas_free(&cv);
    OK(bt_graph_points(30, true) == 60 && bt_graph_points(30, false) == 30,
       "braille shows 2 points per cell, ASCII 1");
    /* Dot plot: one glyph a series so they read without color. 3 columns x 4 rows,
     * ymax 30: settled {0, 10, 30}, estimated {NAN, 10, 20}, quota level 25.
     * Rows: 30 -> row 0, 25 -> lround(25/30*3) = 3 from the bottom -> row 0? 25/30*3 =
     * 2.5 -> 3 -> row 0; 20 -> 2 -> row 1; 10 -> 1 -> row 2; 0 -> row 3. */
    bt_canvas_init(&cv, 3, 4);
    double st[3] = {0, 10, 30}, es[3] = {NAN, 10, 20};
    struct bt_plot_series ds[] = {
        {.kind = BT_SER_LEVEL, .level = 25, .role = 1, .ascii = '-'},
        {.kind = BT_SER_LINE, .v = st, .n = 3, .role = 2, .ascii = '*', .over = true},
        {.kind = BT_SER_LINE, .v = es, .n = 3, .role = 3, .ascii = 'o', .merge_with = 2,
         .merge_glyph = '@', .over = true},
    };
    bt_graph_dots(&cv, 0, 0, 3, 4, ds, 3, 30, false, 9);
    OK(bt_canvas_get(&cv, 0, 3)->ch == '*', "settled 0 at the bottom left");
    OK(bt_canvas_get(&cv, 1, 2)->ch == '@', "settled and estimated on one cell: the merge glyph");
    OK(bt_canvas_get(&cv, 2, 1)->ch == 'o' && bt_canvas_get(&cv, 2, 1)->role == 3,
       "the estimate alone keeps its own glyph");
    OK(bt_canvas_get(&cv, 2, 0)->ch == '*', "settled 30 at the top");
    /* the quota (row 0, every column); column 2 holds 30 > 25: a crossing,
     * but settled's dot (drawn later) sits on that cell, so check column 0 */
    OK(bt_canvas_get(&cv, 0, 0)->ch == '-' && bt_canvas_get(&cv, 0, 0)->role == 1,
       "the quota dashed where nothing crosses it");
    bt_canvas_free(&cv);
    bt_canvas_init(&cv, 3, 4);
    double hi[3] = {0, 0, 28};
    struct bt_plot_series cs[] = {
        {.kind = BT_SER_LEVEL, .level = 20, .role = 1, .ascii = '-'},
        {.kind = BT_SER_LINE, .v = hi, .n = 3, .role = 2, .ascii = '*', .over = true},
    };
    bt_graph_dots(&cv, 0, 0, 3, 4, cs, 2, 30, false, 9);
    /* 20 -> lround(2) -> row 1; 28 -> lround(2.8) = 3 -> row 0 */
    OK(bt_canvas_get(&cv, 2, 1)->ch == '!' && bt_canvas_get(&cv, 2, 1)->role == 9,
       "a value above the quota marks the quota line '!' in its column");
    OK(bt_canvas_get(&cv, 1, 1)->ch == '-' && bt_canvas_get(&cv, 0, 1)->ch == '-',
       "elsewhere the quota line stays");
    bt_canvas_free(&cv);
    /* A floor (below): the slowdown threshold. 3 columns x 4 rows, ymax 30, floor 20
     * (row 1, as above); speeds {28, 10, NAN}: 10 lies under it (column 1 marked), 28
     * above (column 0 not: a floor is not crossed upwards), NAN is no value. */
    bt_canvas_init(&cv, 3, 4);
    double sp[3] = {28, 10, NAN};
    struct bt_plot_series fs[] = {
        {.kind = BT_SER_LEVEL, .level = 20, .role = 1, .ascii = '-', .below = true},
        {.kind = BT_SER_LINE, .v = sp, .n = 3, .role = 2, .ascii = '*'},
    };
    bt_graph_dots(&cv, 0, 0, 3, 4, fs, 2, 30, false, 9);
    OK(bt_canvas_get(&cv, 1, 1)->ch == '!' && bt_canvas_get(&cv, 1, 1)->role == 9,
       "a floor: a value under it marks its line '!' in that column");
    OK(bt_canvas_get(&cv, 2, 1)->ch == '-', "... a gap (NAN) does not");
    OK(bt_canvas_get(&cv, 0, 0)->ch == '*' && bt_canvas_get(&cv, 0, 1)->ch == '-',
       "... nor a value above it");
    bt_canvas_free(&cv);
    return tap_done();
}
