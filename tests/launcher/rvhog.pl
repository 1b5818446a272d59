#!/usr/bin/perl
# rvhog.pl — a hostile neighbour of a Loom job: finds the TCP port the
# process PID listens on (from /proc/PID/fd and /proc/net/tcp, as any
# local user can), opens COUNT connections to it, reads each one's
# greeting and never answers.  Whenever the server closes one, it opens
# another, so the server is kept full of idle connections.  When all
# COUNT are open it creates the file READY; it runs until killed.
# PID may also be the parent of that process (e.g. timeout(1)).
# Usage: rvhog.pl PID COUNT READY
use strict;
use warnings;
use IO::Socket::INET;
use IO::Select;

my ($pid, $count, $ready) = @ARGV;
die "usage: rvhog.pl PID COUNT READY\n" unless defined $ready;

sub listen_port {
    my %mine;
    my @pids = ($pid);
    for my $st (glob "/proc/[0-9]*/stat") { # and its children
        open my $f, '<', $st or next;
        my $l = <$f> // '';
        push @pids, $1 if $l =~ /^(\d+) \(.*\) \S (\d+) / && $2 == $pid;
    }
    for my $fd (map { glob "/proc/$_/fd/*" } @pids) {
        my $l = readlink $fd or next;
        $mine{$1} = 1 if $l =~ /^socket:\[(\d+)\]$/;
    }
    open my $t, '<', '/proc/net/tcp' or return;
    while (<$t>) {
        my @f = split;
        next unless @f > 9 && $f[3] eq '0A' && $mine{$f[9]};
        my (undef, $port) = split /:/, $f[1];
        return hex $port;
    }
    return;
}

my $port;
for (1 .. 600) {
    last if defined($port = listen_port());
    select undef, undef, undef, 0.05;
}
die "rvhog: no listening socket of pid $pid\n" unless $port;

my $sel = IO::Select->new;
sub one {
    my $s = IO::Socket::INET->new(PeerAddr => "127.0.0.1:$port", Timeout => 5) or return;
    $sel->add($s);
}
one() for 1 .. $count;
for my $s ($sel->handles) { # each greeted
    my $got = '';
    while (length $got < 29) { sysread($s, my $b, 29 - length $got) or last; $got .= $b; }
}
open my $r, '>', $ready or die "rvhog: $ready: $!\n";
close $r;
for (;;) {
    for my $s ($sel->can_read(1)) {
        my $n = sysread($s, my $b, 4096);
        next if $n;
        $sel->remove($s); # closed (refused): take its place again
        close $s;
        one();
    }
}
