/* The config reader at scale (issue 16 item 7: section lines were found by scanning
 * the whole text twice per route). An input is a recipe, so a few bytes reach
 * 10,000 routes: bytes 0-1 the route count (0 to 10,000, shifted right by twice
 * the top three bits of byte 2, so most runs are small and quick), the low bits of
 * byte 2 how the section lines are spelled, the rest a fragment written into every
 * section after its model line, or once at the end (keys, comments, more
 * sections, junk). Then, when the config parses,
 * every generated route must have the line of its own section.
 * fuzz-smoke-runs: 300 (a 10,000-route input takes ~0.1 s under ASan) */
#include <stdio.h>
#include <string.h>

#include "core/config.h"
#include "core/util.h"
#include "tests/fuzz/fuzz.h"
#include "io/conffile.h"

#define MAX_ROUTES 10000

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 3)
        return 0;
    unsigned style = data[2];
    int n = (((data[0] << 8) | data[1]) % (MAX_ROUTES + 1)) >> (2 * (style >> 5));
    const char *frag = (const char *)data + 3;
    size_t flen = size - 3;
    if (flen > 256)
        flen = 256;
    /* the fragment as text: no NUL (a file read stops at none, but the parser takes a
     * C string) */
    char fr[257];
    size_t k = 0;
    for (size_t i = 0; i < flen; i++)
        if (frag[i])
            fr[k++] = frag[i];
    fr[k] = '\0';
    int frag_lines = 0;
    for (size_t i = 0; i < k; i++)
        frag_lines += fr[i] == '\n';
    bool frag_nl = k && fr[k - 1] == '\n';

    struct bt_buf b = {0};
    int *line = bt_xcalloc((size_t)(n ? n : 1), sizeof *line);
    int at = 1;
    bt_buf_puts(&b, "[bedtop]\nregion = us-east-1\n");
    at += 2;
    for (int i = 0; i < n; i++) {
        line[i] = at;
        bt_buf_printf(&b, "%s[route%s r%d%s]\nmodel = m%d\n", style & 1 ? "  " : "",
                      style & 2 ? "  " : "", i, style & 4 ? " " : "", i);
        at += 2;
        if (style & 8) {
            bt_buf_printf(&b, "%s%s", fr, frag_nl ? "" : "\n");
            at += frag_lines + (frag_nl ? 0 : 1);
        }
    }
    if (!(style & 8))
        bt_buf_puts(&b, fr);
    if (style & 16 && n) /* the first route again, at the end */
        bt_buf_puts(&b, "\n[route r0]\nmodel = again\n");

    struct bt_config c;
    char err[512] = "";
    bt_config_init(&c);
    bool ok = bt_config_parse_string(&c, bt_buf_str(&b), "fuzz.conf", err, sizeof err);
    FUZZ_NEED_ERR(ok, err);
    if (ok) {
        if ((style & 16) && n)
            abort(); /* a route defined twice must be refused */
        /* generated routes come first, in order, unless the fragment (written once
         * at the end, or into every section) adds others between them */
        for (int i = 0, r = 0; i < n && r < c.nroutes; r++) {
            char name[16];
            snprintf(name, sizeof name, "r%d", i);
            if (strcmp(c.routes[r].name, name) != 0)
                continue;
            if (c.routes[r].line != line[i])
                abort(); /* the line of another section, or none */
            i++;
        }
        (void)bt_config_find_route(&c, "r0");
    }
    bt_config_free(&c);
    free(line);
    bt_buf_free(&b);
    return 0;
}
