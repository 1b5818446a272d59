# Makefile — GNU Make only.  Builds the runtime (libloom.a, libloom.so), the ML code
# (libloom-ml.a), the launcher, the apps and the tests into $(BUILD); `make help` lists targets.
#
#   make                 build everything into build/
#   make check           install missing packages, build, run the TAP suite
#   make check SANITIZE=1   the same in an ASan+UBSan build (build-asan/)
#   make demo            the main job: the demo on 2 local ranks
#   make bench           benchmarks under tests/perf, tables into docs/
#   make plots           convergence plots (gnuplot) into docs/plots/
#   make install PREFIX=/opt/loom   (with the apps and their man pages)
#   make deps            install the Debian packages Loom needs
#   make fuzz            every libFuzzer harness for FUZZ_SECONDS (60) each (clang)
#   make check-tsan      the threaded tests in a ThreadSanitizer build (build-tsan/)

PREFIX  ?= /usr/local
CC      ?= gcc
CFLAGS  ?= -O2 -g
WARN    := -Wall -Wextra -Werror
ifeq ($(SANITIZE),1)
BUILD   ?= build-asan
SAN     := -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined
else ifeq ($(SANITIZE),thread)
BUILD   ?= build-tsan
SAN     := -fsanitize=thread -fno-omit-frame-pointer
else
BUILD   ?= build
SAN     :=
endif
CPPFLAGS_ALL := -std=gnu11 -D_GNU_SOURCE -Ilib
CFLAGS_ALL   := $(CPPFLAGS_ALL) $(WARN) $(CFLAGS) -fPIC -fopenmp $(SAN)
LDLIBS_ALL   := -lucp -lucs -lnuma -lz -lpthread -lm
LDFLAGS_ALL  := -fopenmp $(SAN) $(LDFLAGS)

LIB_SRC  := $(wildcard lib/*.c dsm/*.c dsm/ckpt/*.c sched/*.c lifecycle/*.c)
LIB_OBJ  := $(LIB_SRC:%.c=$(BUILD)/obj/%.o)
# The ML code (algorithms, file readers, generators) and the apps' shared
# command-line helpers: static archives the apps link, never part of
# libloom (tests/apps/libsplit.t checks it with nm).
ML_SRC   := $(wildcard kernels/*.c data/*.c)
ML_OBJ   := $(ML_SRC:%.c=$(BUILD)/obj/%.o)
APPC_SRC := $(wildcard apps/common/*.c)
APPC_OBJ := $(APPC_SRC:%.c=$(BUILD)/obj/%.o)
RUN_SRC  := $(wildcard apps/loomrun/*.c)
RUN_OBJ  := $(RUN_SRC:%.c=$(BUILD)/obj/%.o)
APP_SRC  := $(wildcard apps/*.c)
APPS     := $(APP_SRC:apps/%.c=$(BUILD)/bin/%)
UNIT_SRC := $(wildcard tests/unit/*.c)
UNITS    := $(UNIT_SRC:tests/unit/%.c=$(BUILD)/tests/unit/%)
TBIN_SRC := $(wildcard tests/bin/*.c)
TBINS    := $(TBIN_SRC:tests/bin/%.c=$(BUILD)/tests/bin/%)
PERF_SRC := $(filter-out %_mpi.c,$(wildcard tests/perf/*.c))
PERFS    := $(PERF_SRC:tests/perf/%.c=$(BUILD)/tests/perf/%)
# examples/NAME/omp.c (plain OpenMP, no Loom) and loom.c (its port)
EX_NAMES := $(notdir $(wildcard examples/*))
EXAMPLES := $(foreach e,$(EX_NAMES),$(BUILD)/examples/$(e)/omp $(BUILD)/examples/$(e)/loom)

.PHONY: all check check-tsan demo bench plots install deps clean help fuzz fuzz-build
.SECONDARY:
all: $(BUILD)/libloom.a $(BUILD)/libloom.so $(BUILD)/libloom.so.0 $(BUILD)/libloom-ml.a \
     $(BUILD)/bin/loomrun $(BUILD)/bin/loomcc $(APPS) $(UNITS) $(TBINS) $(PERFS) $(EXAMPLES)

HEADERS  := $(wildcard lib/*.h dsm/*.h dsm/ckpt/*.h sched/*.h lifecycle/*.h kernels/*.h data/*.h apps/common/*.h \
                      apps/loomrun/*.h tests/*.h)
$(BUILD)/obj/%.o: %.c $(HEADERS)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) -c $< -o $@

$(BUILD)/libloom.a: $(LIB_OBJ)
	@mkdir -p $(dir $@)
	rm -f $@ && ar rcs $@ $^

# It exports exactly lib/loom.h's functions (lib/libloom.map).
$(BUILD)/libloom.so: $(LIB_OBJ) lib/libloom.map
	$(CC) -shared -Wl,-soname,libloom.so.0 -Wl,--version-script=lib/libloom.map $(LDFLAGS_ALL) \
	    -o $@ $(LIB_OBJ) $(LDLIBS_ALL)

# The soname, so that programs loomcc links in the build tree find it.
$(BUILD)/libloom.so.0: $(BUILD)/libloom.so
	ln -sf libloom.so $@

# loomcc (tools/loomcc.in): the build tree's points into the build tree,
# the installed one into PREFIX.
VERSION := $(shell sed -n 's/.*LOOM_VERSION_STRING "\(.*\)"/\1/p' lib/loom.h)
LOOMCC_SED = sed -e 's|@INCDIR@|$(1)|' -e 's|@LIBDIR@|$(2)|' -e 's|@CC@|$(CC)|' \
                 -e 's|@VERSION@|$(VERSION)|' tools/loomcc.in
$(BUILD)/bin/loomcc: tools/loomcc.in lib/loom.h
	@mkdir -p $(dir $@)
	$(call LOOMCC_SED,$(abspath lib),$(abspath $(BUILD))) > $@ && chmod 755 $@

$(BUILD)/libloom-ml.a: $(ML_OBJ)
	@mkdir -p $(dir $@)
	rm -f $@ && ar rcs $@ $^

$(BUILD)/libloom-apps.a: $(APPC_OBJ)
	@mkdir -p $(dir $@)
	rm -f $@ && ar rcs $@ $^

$(BUILD)/bin/loomrun: $(RUN_OBJ) $(BUILD)/libloom.a
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS_ALL) -o $@ $^ $(LDLIBS_ALL)

$(BUILD)/bin/%: $(BUILD)/obj/apps/%.o $(BUILD)/libloom-apps.a $(BUILD)/libloom-ml.a $(BUILD)/libloom.a
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS_ALL) -o $@ $^ $(LDLIBS_ALL)

$(BUILD)/tests/unit/%: $(BUILD)/obj/tests/unit/%.o \
                       $(filter-out $(BUILD)/obj/apps/loomrun/loomrun.o,$(RUN_OBJ)) \
                       $(BUILD)/libloom-ml.a $(BUILD)/libloom.a
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS_ALL) -o $@ $^ $(LDLIBS_ALL)

$(BUILD)/tests/bin/%: $(BUILD)/obj/tests/bin/%.o $(BUILD)/libloom-ml.a $(BUILD)/libloom.a
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS_ALL) -o $@ $^ $(LDLIBS_ALL)
$(BUILD)/tests/perf/%: $(BUILD)/obj/tests/perf/%.o $(BUILD)/libloom-ml.a $(BUILD)/libloom.a
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS_ALL) -o $@ $^ $(LDLIBS_ALL)

$(BUILD)/examples/%/omp: examples/%/omp.c
	@mkdir -p $(dir $@)
	$(CC) -std=gnu11 $(WARN) $(CFLAGS) -fopenmp $(SAN) -o $@ $< -lm
$(BUILD)/examples/%/loom: examples/%/loom.c lib/loom.h $(BUILD)/libloom.a
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) -o $@ $< $(BUILD)/libloom.a $(LDFLAGS_ALL) $(LDLIBS_ALL)

# The TAP suite: unit binaries and shell tests, run directly by prove.
TESTS_SH := $(sort $(wildcard tests/rank/*.t tests/dsm/*.t tests/sched/*.t tests/launcher/*.t tests/cluster/*.t \
                          tests/apps/*.t tests/fuzz/*.t tests/sanitize/*.t))
check:
	@tools/deps.sh
	@tools/deps.sh --optional fuzz valgrind install slurm
	@$(MAKE) --no-print-directory all
	tools/layers.sh $(LIB_OBJ)
	LOOMTEST_BUILD=$(abspath $(BUILD)) LOOMTEST_SANITIZE=$(SANITIZE) prove --exec '' $(UNITS) $(TESTS_SH)

# ---- fuzzing: libFuzzer harnesses (tests/fuzz/fuzz_*.c), built with clang,
# ASan and UBSan against the runtime with a stub in place of UCX's transport
# (clang must compile it warning-free too).  See docs/security.md.
FUZZ_CC      ?= clang
FUZZ_BUILD   ?= build-fuzz
FUZZ_SECONDS ?= 60
FUZZ_SAN     := -fsanitize=address,undefined -fno-sanitize-recover=undefined
# -Wno-pass-failed: at -O1 clang may not honour an `omp simd` hint; a hint
# is not a fault.
FUZZ_CFLAGS  := $(CPPFLAGS_ALL) -Idata -Iapps/loomrun -Idsm -Itests/fuzz $(WARN) -O1 -g \
                -Wno-pass-failed -fno-omit-frame-pointer -fopenmp -fsanitize=fuzzer-no-link $(FUZZ_SAN)
FUZZ_LIB_SRC := $(filter-out lib/transport.c,$(LIB_SRC)) $(wildcard data/*.c) apps/loomrun/hostfile.c
FUZZ_LIB_OBJ := $(FUZZ_LIB_SRC:%.c=$(FUZZ_BUILD)/obj/%.o)
FUZZ_SUPPORT := $(FUZZ_BUILD)/obj/tests/fuzz/fuzz.o $(FUZZ_BUILD)/obj/tests/fuzz/stub_transport.o
FUZZ_SRC     := $(wildcard tests/fuzz/fuzz_*.c)
FUZZERS      := $(FUZZ_SRC:tests/fuzz/%.c=$(FUZZ_BUILD)/%)

$(FUZZ_BUILD)/obj/%.o: %.c $(HEADERS) $(wildcard tests/fuzz/*.h)
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(FUZZ_CFLAGS) -c $< -o $@

$(FUZZ_BUILD)/libloom-fuzz.a: $(FUZZ_LIB_OBJ)
	rm -f $@ && ar rcs $@ $^

# --wrap=_exit: a handler that stops the job returns to the harness (fuzz.c);
# the compiler-rt builtins convert __fp16 for clang 14 (dsm.h's loom_half).
$(FUZZ_BUILD)/fuzz_%: $(FUZZ_BUILD)/obj/tests/fuzz/fuzz_%.o $(FUZZ_SUPPORT) $(FUZZ_BUILD)/libloom-fuzz.a
	$(FUZZ_CC) -fsanitize=fuzzer $(FUZZ_SAN) -fopenmp -Wl,--wrap=_exit -o $@ $^ \
	    $$($(FUZZ_CC) -rtlib=compiler-rt -print-libgcc-file-name) -lnuma -lz -lpthread -lm

fuzz-build: $(FUZZERS)

fuzz:
	@tools/deps.sh fuzz
	@$(MAKE) --no-print-directory fuzz-build
	tests/fuzz/run.sh $(FUZZ_BUILD) $(FUZZ_SECONDS)

# ---- ThreadSanitizer: the threaded parts (SANITIZE=thread, build-tsan/).
# Loom's own threads (heartbeat, rendezvous server, progress agent), the
# transport lock, the SSP allreduce's and ring's handlers, the control
# paths.  Left out, see docs/security.md: OpenMP regions (libgomp is not
# built with TSan, so OMP_NUM_THREADS=1 and the OpenMP tests, test_gen
# among them, are not run).
# The page tests (the fault server, the agent applying diffs to homes kept
# in place, the valid and dirty lists) run with one OpenMP thread and over shared memory only:
# over TCP, UCX's software get reads a whole home unit on the agent thread
# while the home writes other bytes of it in place (tolerated by design,
# docs/dsm.md); pages_coll.t is left out because every rank stores the
# same collective result into the same shared bytes (allowed, docs/dsm.md),
# so a home's own stores meet other ranks' identical diffs.  UCX_MEM_EVENTS=no:
# UCX's memory hooks crash under TSan in exiting threads.  LOOM_TIMEOUT=20:
# ranks run several times slower.
TSAN_UNITS := $(filter-out %/test_gen,$(UNIT_SRC:tests/unit/%.c=build-tsan/tests/unit/%))
TSAN_TESTS := tests/rank/collectives.t tests/rank/barrier.t tests/rank/foreign.t tests/rank/srun_env.t \
              tests/dsm/allreduce_ssp.t tests/dsm/ring.t tests/launcher/faults.t \
              tests/launcher/jobkey.t tests/launcher/isolation.t \
              tests/dsm/pages.t tests/dsm/pages_states.t
check-tsan:
	@tools/deps.sh
	@$(MAKE) --no-print-directory SANITIZE=thread all
	UCX_MEM_EVENTS=no OMP_NUM_THREADS=1 LOOM_TIMEOUT=20 \
	TSAN_OPTIONS="halt_on_error=0 exitcode=66 suppressions=$(abspath tests/sanitize/tsan.supp)" \
	LOOMTEST_BUILD=$(abspath build-tsan) LOOMTEST_SANITIZE=thread \
	    prove $(PROVE_FLAGS) --exec '' $(TSAN_UNITS) $(TSAN_TESTS)

ML100K := ../shared/data/movielens-100k
demo:
	@tools/deps.sh
	@$(MAKE) --no-print-directory all
	@if [ -f $(ML100K)/u1.base ]; then \
	    set -x; $(BUILD)/bin/loomrun -n 2 $(BUILD)/bin/loom-mf --train $(ML100K)/u1.base \
	        --test $(ML100K)/u1.test --log $(BUILD)/demo-mf.csv; \
	else \
	    echo "demo: $(ML100K) not found; training on generated ratings instead"; \
	    $(BUILD)/bin/loom-gen ratings --users 900 --items 1600 --rank 5 --samples 100000 \
	        --out $(BUILD)/demo-ratings && \
	    set -x && $(BUILD)/bin/loomrun -n 2 $(BUILD)/bin/loom-mf --train $(BUILD)/demo-ratings.train \
	        --test $(BUILD)/demo-ratings.test --log $(BUILD)/demo-mf.csv; \
	fi

bench:
	@tools/deps.sh bench
	@$(MAKE) --no-print-directory all
	tests/perf/run.sh $(BUILD)
	tests/perf/examples.sh $(BUILD)
	tests/perf/cluster_policies.sh $(BUILD)

plots:
	@tools/deps.sh plots
	@$(MAKE) --no-print-directory all
	tools/plots.sh $(BUILD)
	tests/perf/cluster_plots.sh $(BUILD)

deps:
	@tools/deps.sh

# Man pages: help2man over each program's --help and --version; the NAME
# line is the first line of the paragraph after the usage, up to its ':'
# or '.'.  help2man is needed by `make install` only (tools/deps.sh install).
MANS := $(BUILD)/man/loomrun.1 $(BUILD)/man/loomcc.1 $(APPS:$(BUILD)/bin/%=$(BUILD)/man/%.1)
$(BUILD)/man/%.1: $(BUILD)/bin/%
	@mkdir -p $(dir $@)
	help2man -N -n "$$($< --help | sed -n '/^$$/{n;s/ *([^)]*)//;s/[.:].*//;p;q}')" -o $@ $<

install: all
	@tools/deps.sh install
	@$(MAKE) --no-print-directory $(MANS)
	install -d $(DESTDIR)$(PREFIX)/include $(DESTDIR)$(PREFIX)/lib/pkgconfig $(DESTDIR)$(PREFIX)/bin \
	    $(DESTDIR)$(PREFIX)/share/man/man1
	install -m 644 lib/loom.h $(DESTDIR)$(PREFIX)/include/
	install -m 644 $(BUILD)/libloom.a $(DESTDIR)$(PREFIX)/lib/
	install -m 755 $(BUILD)/libloom.so $(DESTDIR)$(PREFIX)/lib/libloom.so.0
	ln -sf libloom.so.0 $(DESTDIR)$(PREFIX)/lib/libloom.so
	install -m 755 $(BUILD)/bin/loomrun $(APPS) $(DESTDIR)$(PREFIX)/bin/
	$(call LOOMCC_SED,$(PREFIX)/include,$(PREFIX)/lib) > $(DESTDIR)$(PREFIX)/bin/loomcc
	chmod 755 $(DESTDIR)$(PREFIX)/bin/loomcc
	install -m 644 $(MANS) $(DESTDIR)$(PREFIX)/share/man/man1/
	sed -e 's|@PREFIX@|$(PREFIX)|' -e 's|@VERSION@|$(VERSION)|' \
	    lib/loom.pc.in > $(DESTDIR)$(PREFIX)/lib/pkgconfig/loom.pc
	install -d $(DESTDIR)$(PREFIX)/lib/cmake/Loom
	for f in LoomConfig LoomConfigVersion; do \
	    sed -e 's|@VERSION@|$(VERSION)|' -e 's|@VERSION_MAJOR@|$(firstword $(subst ., ,$(VERSION)))|' \
	        lib/$$f.cmake.in > $(DESTDIR)$(PREFIX)/lib/cmake/Loom/$$f.cmake || exit 1; \
	done

clean:
	rm -rf build build-asan build-tsan build-fuzz

help:
	@sed -n '2,15p' Makefile
