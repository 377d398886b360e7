/* io/file.h bt_write_private_file: the one way bedtop writes a file it keeps (the tag
 * and inference-profile caches, check's state, the refreshed SSO token), in a real
 * temporary directory: whole or not at all, 0600, never through a planted link. */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "io/file.h"
#include "tests/tap.h"

/* the names in dir, but "." and "..": a temporary left behind shows here */
static int entries(const char *dir)
{
    DIR *d = opendir(dir);
    int n = 0;
    for (struct dirent *e; d && (e = readdir(d));)
        n += strcmp(e->d_name, ".") && strcmp(e->d_name, "..");
    if (d)
        closedir(d);
    return n;
}

static char *slurp(const char *path)
{
    return bt_read_file(path, 1 << 20, NULL);
}

int main(void)
{
    char dir[] = "/tmp/bedtop-private-XXXXXX";
    if (!mkdtemp(dir)) {
        OK(false, "a temporary directory (%s)", strerror(errno));
        return tap_done();
    }
    char path[256], other[256], link_at[256];
    snprintf(path, sizeof path, "%s/cache.json", dir);
    snprintf(other, sizeof other, "%s/elsewhere", dir);
    snprintf(link_at, sizeof link_at, "%s/linked.json", dir);
    umask(022); /* a writer's usual mask: the file must still be 0600 */

    OK(bt_write_private_file(path, "{\"a\": 1}\n", 9, false), "a new file is written");
    char *t = slurp(path);
    OK(t && !strcmp(t, "{\"a\": 1}\n"), "... with exactly its data");
    free(t);
    struct stat sb = {0};
    int st = stat(path, &sb); /* before OK: its arguments are evaluated in no order */
    OK(st == 0 && (sb.st_mode & 0777) == 0600, "... mode 0600 whatever the umask (%o)",
       (unsigned)(sb.st_mode & 0777));
    OK(entries(dir) == 1, "... and no temporary beside it");

    OK(bt_write_private_file(path, "two", 3, true), "written over (and fsync'd)");
    t = slurp(path);
    OK(t && !strcmp(t, "two"), "... the old content replaced whole");
    free(t);
    OK(bt_write_private_file(path, "", 0, false), "an empty file is a file");
    OK(stat(path, &sb) == 0 && sb.st_size == 0, "... of 0 bytes");

    /* a symlink planted where the cache goes is replaced, never written through: the
     * file it points at keeps its content */
    FILE *f = fopen(other, "w");
    if (f) {
        fputs("precious", f);
        fclose(f);
    }
    OK(symlink(other, link_at) == 0, "a symlink planted at the cache's name");
    OK(bt_write_private_file(link_at, "cache", 5, false), "written at the link's name");
    OK(lstat(link_at, &sb) == 0 && S_ISREG(sb.st_mode), "... which is now a regular file of ours");
    t = slurp(other);
    OK(t && !strcmp(t, "precious"), "... and the link's target is untouched");
    free(t);

    /* a directory that does not exist: false, errno says why, nothing is left */
    char missing[300];
    snprintf(missing, sizeof missing, "%s/no/such/file", dir);
    errno = 0;
    OK(!bt_write_private_file(missing, "x", 1, false) && errno == ENOENT,
       "a missing directory: false with ENOENT (%s)", strerror(errno));
    /* a path that is a directory: the rename fails, the temporary goes */
    char sub[300];
    snprintf(sub, sizeof sub, "%s/sub", dir);
    mkdir(sub, 0700);
    int before = entries(dir);
    OK(!bt_write_private_file(sub, "x", 1, false), "a directory at the path: false");
    int after = entries(dir);
    OK(after == before, "... and no temporary left beside it (%d entries, %d before)",
       after, before);

    unlink(path);
    unlink(link_at);
    unlink(other);
    rmdir(sub);
    rmdir(dir);
    return tap_done();
}
