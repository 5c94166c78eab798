"""The local cluster's address ranges, and the real node's network on this machine: one bridge that holds every
pod address (and the node's own), and a firewall chain that keeps pod traffic on that bridge: nothing a pod sends
leaves the machine, and nothing from outside reaches the pods or the node's ports on the bridge address."""

from __future__ import annotations

import ipaddress
import subprocess
from dataclasses import dataclass
from pathlib import Path

SERVICE_RANGE = "10.96.0.0/16"
BRIDGE = "verlppo0"
POD_CIDR = ipaddress.ip_network("10.89.0.0/24")
# The bridge's own address: the pods' gateway to Service addresses, and the node's address (kubelet, DNS).
NODE_IP = str(next(POD_CIDR.hosts()))
ISOLATION_CHAIN = "VERL-PPO-ISOLATE"
FORWARDING = Path("/proc/sys/net/ipv4/ip_forward")
# Bridged pod-to-pod packets must pass iptables, where kube-router's NetworkPolicy rules sit.
BRIDGE_NETFILTER = Path("/proc/sys/net/bridge/bridge-nf-call-iptables")


@dataclass(frozen=True)
class Tools:
    """The unpacked Debian tree's commands, with the environment they run in."""
    env: dict[str, str]

    def iptables(self, *args: str, check: bool = True) -> subprocess.CompletedProcess:
        return subprocess.run(["iptables", "-w", "5", *args], env=self.env, capture_output=True, text=True, check=check)


def _ip(*args: str, check: bool = True) -> None:
    subprocess.run(["ip", *args], check=check, capture_output=True, text=True)


# The isolation chain's rules, in order.
_ISOLATION_RULES = [
    ["-i", BRIDGE, "-o", BRIDGE, "-j", "RETURN"],  # pod to pod, and to Services (DNAT back onto the bridge)
    ["-i", BRIDGE, "-j", "DROP"],                  # a pod towards anywhere else
    ["-o", BRIDGE, "-j", "DROP"],                  # anywhere else towards a pod
]
# The node's ports on the bridge address answer only the bridge and this machine itself (lo).
_INPUT_RULE = ["-d", NODE_IP, "!", "-i", BRIDGE, "-j", ISOLATION_CHAIN + "-IN"]


def set_up(tools: Tools) -> str:
    """Creates the bridge and the isolation chain, turns forwarding on; returns the previous
    forwarding setting (restored by tear_down)."""
    previous = FORWARDING.read_text().strip()
    _ip("link", "add", BRIDGE, "type", "bridge")
    _ip("addr", "add", f"{NODE_IP}/{POD_CIDR.prefixlen}", "dev", BRIDGE)
    _ip("link", "set", BRIDGE, "up")
    tools.iptables("-N", ISOLATION_CHAIN)
    for rule in _ISOLATION_RULES:
        tools.iptables("-A", ISOLATION_CHAIN, *rule)
    tools.iptables("-I", "FORWARD", "1", "-j", ISOLATION_CHAIN)
    tools.iptables("-N", ISOLATION_CHAIN + "-IN")
    tools.iptables("-A", ISOLATION_CHAIN + "-IN", "-i", "lo", "-j", "RETURN")
    tools.iptables("-A", ISOLATION_CHAIN + "-IN", "-j", "DROP")
    tools.iptables("-I", "INPUT", "1", *_INPUT_RULE)
    BRIDGE_NETFILTER.write_text("1")
    FORWARDING.write_text("1")
    return previous


def put_isolation_first(tools: Tools) -> None:
    """Moves the isolation chain back to the top of FORWARD: kube-proxy and kube-router insert their
    chains there at start, and kube-router's accepts what the NetworkPolicies allow."""
    tools.iptables("-D", "FORWARD", "-j", ISOLATION_CHAIN)
    tools.iptables("-I", "FORWARD", "1", "-j", ISOLATION_CHAIN)


def tear_down(tools: Tools, forwarding: str) -> None:
    """Undoes set_up; each step tolerates what is already gone."""
    FORWARDING.write_text(forwarding)
    tools.iptables("-D", "INPUT", *_INPUT_RULE, check=False)
    tools.iptables("-D", "FORWARD", "-j", ISOLATION_CHAIN, check=False)
    for chain in (ISOLATION_CHAIN, ISOLATION_CHAIN + "-IN"):
        tools.iptables("-F", chain, check=False)
        tools.iptables("-X", chain, check=False)
    _ip("link", "del", BRIDGE, check=False)


def exists() -> bool:
    return Path(f"/sys/class/net/{BRIDGE}").exists()
