"""Certificates and keys of the local cluster: one CA, the apiserver's serving certificate, an
admin client certificate (group system:masters) and the service-account signing key; and for a
webhook server (Kueue's) a CA and serving certificate of its own."""

from __future__ import annotations

import datetime
import ipaddress
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

VALIDITY = datetime.timedelta(days=30)


def _name(common_name: str, organization: str | None = None) -> x509.Name:
    attributes = [x509.NameAttribute(NameOID.COMMON_NAME, common_name)]
    if organization:
        attributes.append(x509.NameAttribute(NameOID.ORGANIZATION_NAME, organization))
    return x509.Name(attributes)


def _write_key(path: Path, key: ec.EllipticCurvePrivateKey) -> None:
    path.write_bytes(key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                       serialization.NoEncryption()))
    path.chmod(0o600)


def _write_cert(path: Path, cert: x509.Certificate) -> None:
    path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))


def _builder(subject: x509.Name, issuer: x509.Name, public_key) -> x509.CertificateBuilder:
    now = datetime.datetime.now(datetime.timezone.utc)
    return (x509.CertificateBuilder().subject_name(subject).issuer_name(issuer).public_key(public_key)
            .serial_number(x509.random_serial_number())
            .not_valid_before(now - datetime.timedelta(minutes=5)).not_valid_after(now + VALIDITY))


def write_pki(directory: Path) -> None:
    """Writes ca.crt, apiserver.{crt,key}, admin.{crt,key}, sa.{key,pub} into directory."""
    directory.mkdir(parents=True, exist_ok=True)
    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca_name = _name("verl-ppo-localcluster-ca")
    ca = (_builder(ca_name, ca_name, ca_key.public_key())
          .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
          .add_extension(x509.KeyUsage(digital_signature=True, key_cert_sign=True, crl_sign=True,
                                       content_commitment=False, key_encipherment=False, data_encipherment=False,
                                       key_agreement=False, encipher_only=False, decipher_only=False), critical=True)
          .sign(ca_key, hashes.SHA256()))
    _write_cert(directory / "ca.crt", ca)

    # The in-cluster Service address (first IP of the service range) is in the SANs, as a real
    # apiserver's is, so clients that dial kubernetes.default verify it too.
    sans = x509.SubjectAlternativeName([
        x509.DNSName("localhost"), x509.DNSName("kubernetes"), x509.DNSName("kubernetes.default"),
        x509.DNSName("kubernetes.default.svc"), x509.IPAddress(ipaddress.ip_address("127.0.0.1")),
        x509.IPAddress(ipaddress.ip_address("10.96.0.1")),
    ])
    for name, subject, usage, extensions in (
        ("apiserver", _name("kube-apiserver"), ExtendedKeyUsageOID.SERVER_AUTH, [sans]),
        ("admin", _name("verl-ppo-admin", "system:masters"), ExtendedKeyUsageOID.CLIENT_AUTH, []),
    ):
        key = ec.generate_private_key(ec.SECP256R1())
        builder = _builder(subject, ca_name, key.public_key()).add_extension(
            x509.ExtendedKeyUsage([usage]), critical=False)
        for extension in extensions:
            builder = builder.add_extension(extension, critical=False)
        _write_key(directory / f"{name}.key", key)
        _write_cert(directory / f"{name}.crt", builder.sign(ca_key, hashes.SHA256()))

    sa_key = ec.generate_private_key(ec.SECP256R1())
    _write_key(directory / "sa.key", sa_key)
    (directory / "sa.pub").write_bytes(sa_key.public_key().public_bytes(
        serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo))


def write_webhook_pki(directory: Path, host: str) -> bytes:
    """A CA of its own and a serving certificate for a webhook server on `host` (an IP address):
    tls.crt and tls.key in directory, as controller-runtime's webhook server reads them. Returns the
    CA certificate (PEM) for the webhook configurations' caBundle."""
    directory.mkdir(parents=True, exist_ok=True)
    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca_name = _name("verl-ppo-localcluster-webhook-ca")
    ca = (_builder(ca_name, ca_name, ca_key.public_key())
          .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
          .sign(ca_key, hashes.SHA256()))
    key = ec.generate_private_key(ec.SECP256R1())
    cert = (_builder(_name(host), ca_name, key.public_key())
            .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH]), critical=False)
            .add_extension(x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address(host))]), critical=False)
            .sign(ca_key, hashes.SHA256()))
    _write_key(directory / "tls.key", key)
    _write_cert(directory / "tls.crt", cert)
    return ca.public_bytes(serialization.Encoding.PEM)
