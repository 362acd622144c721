# SPDX-License-Identifier: BSD-2-Clause
# ibfs — InfiniBand UD datagrams as files.
#
#   make            build build/ibfs (warnings are errors)
#   make deps       install every Debian package build, tests, bed and
#                   packaging need (make deps-test: all but packaging)
#   make deps-runtime  only what running ibfs needs (a cluster node)
#   make check      deps-test, build, unit tests on the host, end-to-end tests in
#                   the soft-RoCE test bed; last line "N passed, N failed"
#   make unit       unit tests only (no root, no VM)
#   make e2e        end-to-end tests only, in the test bed
#   make e2e-systemd  the systemd unit in a bed booted by systemd (check
#                   and deb-check run it)
#   make asan       build/asan/ibfs, with AddressSanitizer (check and e2e
#                   make it: t_45 stops it under traffic)
#   make SANITIZE=address,undefined check
#   make demo       three nodes in the test bed and a conversation among them
#   make bench      ibfs beside ibv_ud_pingpong, ib_send_bw and a null FUSE fs
#   make bench-callgrind BASE=REV   instructions per message, this build and REV's
#   make bench-scale [SCALE_N="16 64 256"]   N daemons on one rxe device
#   make fuzz       libFuzzer on the wire decoders, reliable streams, the
#                   bootstrap hello and handshake, and the config loader
#   make fuzz-regress  every fuzz target over its seed corpus once
#   make install    PREFIX=/usr/local DESTDIR=; make uninstall undoes it
#   make deb        the Debian package, build/pkg/ibfs_VERSION_ARCH.deb
#   make deb-check  make deb, lintian, an install in a clean Debian 12
#                   chroot, and make e2e-systemd (network: not part of
#                   make check)
#   make rpm        source and binary RPMs (redhat/), build/rpm/
#   make rpm-check  make rpm, rpmlint, and the RPM's files and requirements
#                   (not part of make check)

PKGS     := fuse3 libibverbs librdmacm inih libcrypto
# The oldest version of each that ibfs builds with, checked before the
# first compile (pkgcheck) and written into the RPM's BuildRequires:
# fuse_set_log_func came in libfuse 3.7 (RHEL 8's 3.3 lacks it),
# ibv_query_gid_ex in rdma-core 32 (librdmacm has the same release
# number), inih's pkg-config file with its meson build (r49), and
# CRYPTO_memcmp in OpenSSL 1.0.1.  docs/install.md says which
# distributions that makes.
PKG_MIN  := fuse3=3.7 libibverbs=1.11.32 librdmacm=1.3.32 inih=49 libcrypto=1.0.1
# The version, written once: debian/changelog's top entry.  ibfs
# --version and the installed man pages say it.
VERSION  := $(shell sed -n '1s/^ibfs .\([^ ]*\). .*/\1/p' debian/changelog)
ifeq ($(VERSION),)
$(error no version in debian/changelog's first line)
endif
CC       ?= cc
CFLAGS   ?= -O2 -g
# Link-time optimisation: the hot paths cross files (a datagram goes from
# tp_recv.c through tp_upcall.c into fs.c, fs_chan.c and fs_park.c), and
# LTO inlines across them as it would within one file.  LTO= turns it off.
# The objects are fat (machine code too), so that the unit tests, 30-odd
# programs, link without a whole-program pass each; speed is the daemon's.
LTO      ?= -flto=auto
CFLAGS   += $(LTO) $(if $(LTO),-ffat-lto-objects)
LDFLAGS  += $(LTO)
AR       := gcc-ar
CFLAGS   += -std=gnu11 -Wall -Wextra -Werror -Wno-unused-parameter \
	    -Wshadow -Wstrict-prototypes -Wmissing-prototypes \
	    -D_GNU_SOURCE -Iinclude $(shell pkg-config --cflags $(PKGS) 2>/dev/null)
# (pkg-config's errors are pkgcheck's to show, once, before compiling)
LDLIBS   += $(shell pkg-config --libs $(PKGS) 2>/dev/null) -lpthread
# libgcc_s loaded at start: glibc loads it on the first pthread_cancel
# (libfuse cancels its workers at unmount), and a daemon out of
# descriptors then aborts instead of stopping ("libgcc_s.so.1 must be
# installed for pthread_cancel to work").
LDLIBS   += -Wl,--push-state,--no-as-needed -lgcc_s -Wl,--pop-state
ifneq ($(SANITIZE),)
# Undefined behaviour aborts instead of printing and going on, so that a
# test notices; the e2e lib also fails a test whose daemon logs a report.
CFLAGS   += -fsanitize=$(SANITIZE) -fno-sanitize-recover=all -fno-omit-frame-pointer
LDFLAGS  += -fsanitize=$(SANITIZE)
endif

B        := build
SRCS     := $(wildcard src/*.c)
OBJS     := $(SRCS:src/%.c=$(B)/obj/%.o)
LIBOBJS  := $(filter-out $(B)/obj/main.o,$(OBJS))
LIB      := $(B)/libibfs.a
FAKES    := $(wildcard tests/unit/fake_*.c tests/unit/fake_*.h)
UNITS    := $(patsubst tests/unit/%.c,$(B)/tests/%,$(wildcard tests/unit/test_*.c))
TOOLS    := $(patsubst tests/tools/%.c,$(B)/tools/%,$(wildcard tests/tools/*.c))

.PHONY: all deps deps-test deps-runtime check unit e2e clean fmt tools asan man pkgcheck
all: $(B)/ibfs tools

# Each library of PKG_MIN is there, in its version or later: pkg-config's
# own message when one is missing, ours when it is too old.  Order-only
# before every object, so it runs before the compiler would complain of a
# missing header, and rebuilds nothing.
pkgcheck:
	@for m in $(PKG_MIN); do n=$${m%%=*} v=$${m#*=}; \
		pkg-config --print-errors --exists "$$n" || { \
			echo "make: ibfs needs $$n $$v or later (make deps; docs/install.md)" >&2; \
			exit 1; }; \
		pkg-config --atleast-version="$$v" "$$n" || { \
			echo "make: $$n is $$(pkg-config --modversion "$$n"), ibfs needs $$v or later (docs/install.md)" >&2; \
			exit 1; }; \
	done

# The daemon with AddressSanitizer, in its own tree beside the plain one,
# for the e2e test that stops it under traffic (t_45); -O0 -g1 and no LTO
# keep it to seconds from clean.
ASAN_B := build/asan
asan:
	CFLAGS='-O0 -g1' $(MAKE) B=$(ASAN_B) SANITIZE=address LTO= \
		$(ASAN_B)/ibfs

tools: $(TOOLS)

# Makefile: its flags (fat LTO objects, say) are part of every object.
$(B)/obj/%.o: src/%.c Makefile | pkgcheck
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(CFLAGS) -MMD -MP -c -o $@ $<

$(B)/obj/main.o: CPPFLAGS += -DIBFS_VERSION='"$(VERSION)"'
$(B)/obj/main.o: debian/changelog

$(B)/ibfs: $(OBJS)
	$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS)

# Every module but main, as an archive: a program linked against it pulls
# in only the objects it needs, so a unit test may define fakes (of tp_*,
# say) in place of a module without clashing with it.
$(LIB): $(LIBOBJS)
	@mkdir -p $(@D)
	rm -f $@
	$(AR) rcs $@ $^

# A unit test is tests/unit/test_X.c, its fakes tests/unit/fake_*.c
# included by it; link order: the test, the archive, then the libraries.
$(B)/tests/%: tests/unit/%.c $(LIB) $(wildcard tests/unit/*.h) $(FAKES)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) -fno-lto -Itests/unit $(LDFLAGS) -fno-lto -o $@ $< $(LIB) $(LDLIBS) -lcmocka

$(B)/tools/%: tests/tools/%.c $(LIB)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $< $(LIB) $(LDLIBS)

# The impostor steps in front of the announce thread's hook (its -r):
# --wrap reroutes announce.o's call to tp_set_announce, which an LTO link
# could inline past; the archive's objects are fat, so no LTO is needed.
$(B)/tools/impostor: LDFLAGS += -fno-lto -Wl,--wrap=tp_set_announce

# The package lists are in scripts/deps.sh, by group: build, test (and
# the bed, benchmarks), package (make deb, make deb-check), runtime.
deps:
	scripts/deps.sh

# make check's: no packaging tools, which a fresh machine would spend
# minutes installing for a suite that does not use them.
deps-test:
	scripts/deps.sh build test

# A cluster node: the shared libraries, fuse3, the verbs providers.
deps-runtime:
	scripts/deps.sh runtime

# lint-docs (in check.sh's unit part) asks the daemon and docnames (the
# man pages' generated regions too: scripts/mkman.sh --check).
unit: $(UNITS) $(B)/ibfs $(B)/tools/docnames
	scripts/check.sh --unit-only

e2e: all asan
	scripts/check.sh --e2e-only

# The systemd unit for real: a bed VM booted by systemd (scripts/bed/run.sh
# --systemd) starts two instances of etc/ibfs@.service, passes messages
# between them and stops them (tests/e2e/systemd/).  Its own boot, about
# a minute; make check runs it after the pair, make deb-check after the
# package's checks.
.PHONY: e2e-systemd
e2e-systemd: all
	E2E_SUITES=systemd scripts/check.sh --e2e-only

# The bed's kernel and initramfs are made while the code compiles (on a
# fresh clone that is a download, an unpack and a cpio, tens of seconds of
# mostly one core); if that fails, check.sh's bed says why.
check: deps-test
	scripts/bed/kernel.sh >/dev/null & kpid=$$!; \
	$(MAKE) -j$$(nproc) all $(UNITS) asan; rc=$$?; \
	wait $$kpid || echo "make check: preparing the bed's kernel failed"; \
	exit $$rc
	scripts/check.sh

# The man pages' generated regions (config keys, status fields, counters,
# .metrics families) from the code's tables; lint-docs fails until this
# has run after a table changed.
man: $(B)/tools/docnames
	scripts/mkman.sh

fmt:
	clang-format -i $(wildcard src/*.c src/*.h) include/*.h tests/unit/*.c tests/unit/*.h tests/tools/*.c \
		tests/fuzz/*.c tests/fuzz/*.h

clean:
	rm -rf $(B)/obj $(B)/tests $(B)/tools $(B)/ibfs $(LIB) $(ASAN_B)

-include $(OBJS:.o=.d)

# Installation: make install [PREFIX=/usr/local] [DESTDIR=/staging].
# The daemon, its man pages (with this VERSION), example configs (in the
# doc folder: no file in /etc/ibfs, where an admin's ibfs.conf is never
# touched), the systemd template, the mount(8) helper
# (/sbin/mount.fuse.ibfs, and mount.ibfs pointing at it) and the firewalld
# service for the bootstrap port.  The Debian
# package is this with PREFIX=/usr (debian/rules).  `make uninstall` with
# the same variables removes exactly those files.
prefix     ?= /usr/local
PREFIX     ?= $(prefix)
BINDIR     ?= $(PREFIX)/bin
MANDIR     ?= $(PREFIX)/share/man
UNITDIR    ?= $(PREFIX)/lib/systemd/system
EXAMPLEDIR ?= $(PREFIX)/share/doc/ibfs/examples
SYSCONFDIR ?= /etc
HELPERDIR  ?= /sbin
# firewalld's own services live in /usr/lib (/etc/firewalld is the admin's).
FIREWALLDIR ?= $(PREFIX)/lib/firewalld/services
INSTALL    ?= install
EXAMPLES   := $(notdir $(wildcard etc/ibfs.conf.example-*))
# Every page of man/, each into the section its suffix names.
MANPAGES   := $(notdir $(wildcard man/*.[1-8]))
# The man pages' footer says the version of debian/changelog.
MAN_VERSION = sed '/^\.TH /s/"ibfs [^"]*"/"ibfs $(VERSION)"/'

.PHONY: install uninstall demo
install: $(B)/ibfs
	$(INSTALL) -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(MANDIR)/man8 \
		$(DESTDIR)$(MANDIR)/man5 $(DESTDIR)$(MANDIR)/man7 \
		$(DESTDIR)$(SYSCONFDIR)/ibfs \
		$(DESTDIR)$(EXAMPLEDIR) $(DESTDIR)$(UNITDIR) $(DESTDIR)$(HELPERDIR)
	$(INSTALL) -m 755 $(B)/ibfs $(DESTDIR)$(BINDIR)/ibfs
	for m in $(MANPAGES); do \
		d=$(DESTDIR)$(MANDIR)/man$${m##*.}; $(INSTALL) -d $$d && \
		$(MAN_VERSION) man/$$m >$$d/$$m && chmod 644 $$d/$$m || exit 1; \
	done
	ln -sf ibfs.8 $(DESTDIR)$(MANDIR)/man8/mount.fuse.ibfs.8
	ln -sf ibfs.8 $(DESTDIR)$(MANDIR)/man8/mount.ibfs.8
	$(INSTALL) -m 644 $(addprefix etc/,$(EXAMPLES)) $(DESTDIR)$(EXAMPLEDIR)/
	sed 's|@BINDIR@|$(BINDIR)|g' 'etc/ibfs@.service' \
		>'$(DESTDIR)$(UNITDIR)/ibfs@.service'
	chmod 644 '$(DESTDIR)$(UNITDIR)/ibfs@.service'
	sed 's|@BINDIR@|$(BINDIR)|g' scripts/mount.ibfs \
		>$(DESTDIR)$(HELPERDIR)/mount.fuse.ibfs
	chmod 755 $(DESTDIR)$(HELPERDIR)/mount.fuse.ibfs
	ln -sf mount.fuse.ibfs $(DESTDIR)$(HELPERDIR)/mount.ibfs
	$(INSTALL) -d $(DESTDIR)$(FIREWALLDIR)
	$(INSTALL) -m 644 etc/firewalld/ibfs.xml $(DESTDIR)$(FIREWALLDIR)/ibfs.xml
	@echo "installed; next: write $(SYSCONFDIR)/ibfs/ibfs.conf (see the examples in $(EXAMPLEDIR))," \
		"then mount, or: systemctl daemon-reload && systemctl enable --now ibfs@ibfs"

uninstall:
	rm -f $(DESTDIR)$(BINDIR)/ibfs \
		$(foreach m,$(MANPAGES),$(DESTDIR)$(MANDIR)/man$(subst .,,$(suffix $(m)))/$(m)) \
		$(DESTDIR)$(MANDIR)/man8/mount.fuse.ibfs.8 \
		$(DESTDIR)$(MANDIR)/man8/mount.ibfs.8 \
		$(DESTDIR)$(FIREWALLDIR)/ibfs.xml \
		$(addprefix $(DESTDIR)$(EXAMPLEDIR)/,$(EXAMPLES)) \
		'$(DESTDIR)$(UNITDIR)/ibfs@.service' \
		$(DESTDIR)$(HELPERDIR)/mount.fuse.ibfs \
		$(DESTDIR)$(HELPERDIR)/mount.ibfs
	-rmdir $(DESTDIR)$(EXAMPLEDIR) $(DESTDIR)$(PREFIX)/share/doc/ibfs 2>/dev/null

# The Debian package (debian/): dpkg-buildpackage -b -us -uc in a copy
# of this tree at build/pkg/ibfs-VERSION, so that it writes its .deb,
# -dbgsym .deb, .buildinfo and .changes into build/pkg/ and leaves this
# tree (and build/ibfs) alone.  Run in a checkout, dpkg-buildpackage
# writes them into the folder above it.
PKG_DIR := $(B)/pkg
.PHONY: deb deb-check
deb:
	scripts/deps.sh build package
	rm -rf $(PKG_DIR)
	mkdir -p $(PKG_DIR)/ibfs-$(VERSION)
	tar -c --exclude=./build --exclude=./.git . | tar -x -C $(PKG_DIR)/ibfs-$(VERSION)
	cd $(PKG_DIR)/ibfs-$(VERSION) && dpkg-buildpackage -b -us -uc -Jauto
	@ls -l $(PKG_DIR)/*.deb

# lintian (no error), the Depends line, and apt install of the .deb in a
# clean Debian 12 chroot: ibfs --version, man ibfs, the unit; then the
# unit run by a real systemd (e2e-systemd, a bed VM of its own).
deb-check: deb
	scripts/deb-check.sh $(PKG_DIR) $(VERSION)
	$(MAKE) e2e-systemd

# The RPM (redhat/): a source tarball of this tree (as make deb copies
# it), the spec written from redhat/ibfs.spec.in with this VERSION and
# the BuildRequires of PKG_MIN, then rpmbuild -ba in build/rpm, which
# leaves build/rpm/SRPMS/*.src.rpm and build/rpm/RPMS/ARCH/*.rpm.  On a
# Debian host (RPM_DEBIAN, found by dpkg) rpm's database is empty, so
# --nodeps; no -debuginfo package (Debian's rpm has no debugedit
# macros); and brp-compress, a bash script that Debian's rpm runs with
# sh (dash: "read: Illegal option -d"), run with bash, so that the man
# pages are compressed as on RHEL.  On RHEL or Fedora rpmbuild checks
# the BuildRequires itself.
RPM_DIR    := $(B)/rpm
RPM_DEBIAN := $(if $(wildcard /usr/bin/dpkg),1)
RPM_HOST_FLAGS := $(if $(RPM_DEBIAN),--nodeps --define 'debug_package %{nil}' \
	--define '__brp_compress bash %{_rpmconfigdir}/brp-compress %{?_prefix}')
RPMBUILD   := rpmbuild --define '_topdir $(abspath $(RPM_DIR))' $(RPM_HOST_FLAGS)
.PHONY: rpm rpm-check
rpm:
	scripts/deps.sh build package
	rm -rf $(RPM_DIR)
	mkdir -p $(RPM_DIR)/SOURCES $(RPM_DIR)/SPECS
	tar -c --exclude=./build --exclude=./.git --transform='s|^\.|ibfs-$(VERSION)|' . | \
		gzip -n >$(RPM_DIR)/SOURCES/ibfs-$(VERSION).tar.gz
	PKG_MIN='$(PKG_MIN)' redhat/mkspec.sh $(VERSION) >$(RPM_DIR)/SPECS/ibfs.spec
	$(RPMBUILD) -ba $(RPM_DIR)/SPECS/ibfs.spec
	@ls -l $(RPM_DIR)/SRPMS/*.rpm $(RPM_DIR)/RPMS/*/*.rpm

# rpmlint (no error) over both RPMs and the spec, the binary RPM's
# contents, requirements and unit, and a rebuild of the source RPM with
# the same host flags (scripts/rpm-check.sh).
rpm-check: rpm
	scripts/rpm-check.sh $(RPM_DIR) $(VERSION) $(RPM_HOST_FLAGS)

# Three nodes in the soft-RoCE test bed, and a conversation among them.
demo:
	$(MAKE) deps-test all
	scripts/demo.sh

# Benchmarks in the soft-RoCE test bed, one VM boot: latency, bandwidth,
# message rate, shell rate and idle cost of ibfs beside ud_pingpong,
# ib_send_bw -c UD and a null FUSE fs; table on stdout, build/bench.json.
# Then delivery = reliable beside datagram on two VMs, at 0% and 5% wire
# loss (bench-reliable alone).
# make bench BENCH_FLAGS=--profile also profiles the daemons.
.PHONY: bench bench-reliable bench-callgrind bench-scale
bench: all
	scripts/bench/bench.sh $(BENCH_FLAGS)
	scripts/bench/reliable.sh

bench-reliable: all
	scripts/bench/reliable.sh

# Only callgrind's instruction counts, a few minutes; BASE=REV also counts
# REV's daemon in the same boot (figures ir_*_base, ir_*_pct).
bench-callgrind: all
	scripts/bench/bench.sh --callgrind-only $(if $(BASE),--base $(BASE))

# N daemons on the bed's one rxe device for each N of SCALE_N, each its
# own mount and bootstrap port, from a config of one hostlist section:
# start time, first messages, fds, RSS, route resolutions, TCP sessions,
# idle CPU (scripts/bench/scale.sh); table on stdout, build/bench-scale.json.
SCALE_N ?= 16 64 256
bench-scale: all
	SCALE_N="$(SCALE_N)" scripts/bench/scale.sh

# libFuzzer targets (clang), FUZZ_TIME seconds each: the datagram decoder
# with reassembly (wire), the config loader (config), the bootstrap hello
# (hello), the bootstrap handshake driven over a socketpair (bshake),
# the reliable trailer and the sender's handling of acks (rel),
# in-order reassembly of reliable streams (relseq), the hostlist
# expander (hostlist), and bootstrap = multicast's announces and their
# challenge and response (ann).  Each runs in build/fuzz/NAME on top of its seeds
# in tests/fuzz/corpus/NAME; crashes land in build/fuzz/.  Each one found
# becomes a unit test.
# make fuzz-regress builds them all and runs each over its seeds once
# (part of make unit and make check, through scripts/check.sh);
# make fuzz-seeds writes the seeds again with the real encoders.
FUZZ_TIME ?= 60
FUZZ_CC   ?= clang
FUZZ_FLAGS = -g -O1 -fsanitize=fuzzer,address,undefined -D_GNU_SOURCE -Iinclude
FUZZ_NAMES := $(patsubst tests/fuzz/fuzz_%.c,%,$(wildcard tests/fuzz/fuzz_*.c))
FUZZ_BINS  := $(FUZZ_NAMES:%=$(B)/fuzz/fuzz_%)
# What each target links beside itself, built once for all of them.
CONFIG_MODS     := $(patsubst src/%.c,%,$(wildcard src/config*.c))
FUZZ_OBJ_wire   := wire wire_reasm util log
FUZZ_OBJ_config := $(CONFIG_MODS) cert hostlist util log
FUZZ_LIB_config := -linih -lcrypto
FUZZ_OBJ_hello  := bootstrap_hello cert util log
FUZZ_LIB_hello  := -lcrypto
FUZZ_OBJ_bshake := bootstrap_session bootstrap_admit bootstrap_cert \
		   bootstrap_hello cert $(CONFIG_MODS) hostlist peer wire util log
FUZZ_LIB_bshake := -lcrypto -linih
FUZZ_OBJ_rel    := wire wire_reasm wire_rel reliable rel_wait util log
FUZZ_OBJ_relseq := wire wire_reasm wire_rel reliable rel_wait util log
FUZZ_OBJ_hostlist := hostlist
FUZZ_OBJ_ann    := announce_msg announce_auth bootstrap_hello cert peer wire util \
		   log $(CONFIG_MODS) hostlist
FUZZ_LIB_ann    := -lcrypto -linih
FUZZ_OBJ_cert   := cert util log
FUZZ_LIB_cert   := -lcrypto

$(B)/fuzz/obj/%.o: src/%.c $(wildcard include/*.h)
	@mkdir -p $(@D)
	$(FUZZ_CC) $(FUZZ_FLAGS) -c -o $@ $<

fuzz_objs = $(patsubst %,$(B)/fuzz/obj/%.o,$(FUZZ_OBJ_$(1)))
.PRECIOUS: $(B)/fuzz/obj/%.o

.SECONDEXPANSION:
$(B)/fuzz/fuzz_%: tests/fuzz/fuzz_%.c $$(call fuzz_objs,$$*) $(wildcard include/*.h) tests/fuzz/fuzz.h
	@mkdir -p $(@D)
	$(FUZZ_CC) $(FUZZ_FLAGS) -o $@ $< $(call fuzz_objs,$*) $(FUZZ_LIB_$*)

.PHONY: fuzz fuzz-bins fuzz-regress fuzz-seeds
fuzz-bins: $(FUZZ_BINS)

fuzz: deps-test
	$(MAKE) fuzz-bins
	set -e; for n in $(FUZZ_NAMES); do \
		mkdir -p $(B)/fuzz/$$n; \
		(cd $(B)/fuzz && ./fuzz_$$n -max_total_time=$(FUZZ_TIME) \
			-print_final_stats=1 $$n $(CURDIR)/tests/fuzz/corpus/$$n); \
	done

fuzz-regress:
	scripts/check.sh --fuzz-only

fuzz-seeds:
	@mkdir -p $(B)/fuzz
	$(CC) $(CFLAGS) -o $(B)/fuzz/mkseeds tests/fuzz/mkseeds.c \
		src/wire.c src/wire_reasm.c src/wire_rel.c src/bootstrap_hello.c \
		src/announce_msg.c src/peer.c src/cert.c \
		$(wildcard src/config*.c) src/hostlist.c \
		src/util.c src/log.c -lcrypto -linih
	$(B)/fuzz/mkseeds tests/fuzz/corpus

# Ten minutes of steady traffic among three nodes in the bed, RSS sampled
# every 10 s: no growth, nothing lost.  Not part of make check.
SOAK_TIME ?= 600
.PHONY: soak
soak: all
	SOAK_TIME=$(SOAK_TIME) tests/soak/soak.sh
