"""E-mail (EML, Outlook MSG): the message's own text with unstructured; its attachments are
documents of their own (an attached message is one attachment, an ``.eml`` in turn)."""

from __future__ import annotations

import email
import email.policy
import io

from ...model import DecodeOptions
from ..embedded import EmbeddedFile, budgeted, clean_name
from .base import Backend, Format

_PARTITIONERS = {"eml": ("unstructured.partition.email", "partition_email"),
                 "msg": ("unstructured.partition.msg", "partition_msg")}


class EmailBackend(Backend):
    partitioners = _PARTITIONERS
    family = "email"
    formats = (
        Format("eml", "message/rfc822", ("eml",), text_based=True),
        Format("msg", "application/vnd.ms-outlook", ("msg",)),
    )

    def partition_arguments(self, fmt: Format, options: DecodeOptions) -> dict:
        return {"process_attachments": False}  # attachments are documents of their own, not the message's text

    def embedded_files(self, data: bytes, fmt: Format, budget: int) -> list[EmbeddedFile]:
        found = _email_attachments(data) if fmt.name == "eml" else _outlook_attachments(data)
        return budgeted(found, budget)


def _email_attachments(data: bytes) -> list[EmbeddedFile]:
    """Attachments of an RFC 822 message; an attached message is one attachment (an .eml of its own)."""
    message = email.message_from_bytes(data, policy=email.policy.compat32)
    found = []
    for part in _leaf_parts(message) if message.is_multipart() else []:
        name = part.get_filename()
        if part.get_content_type() == "message/rfc822":
            inner = part.get_payload()
            payload = inner[0].as_bytes() if isinstance(inner, list) and inner else None
            name = name or "attached-message.eml"
        else:
            disposition = (part.get("Content-Disposition") or "").split(";")[0].strip().lower()
            if disposition != "attachment" and not name:
                continue  # the message's own body
            payload = part.get_payload(decode=True)
        if payload:
            found.append(EmbeddedFile(path=f"attachment {len(found) + 1}", name=clean_name(name), data=payload))
    return found


def _leaf_parts(part):
    """The non-multipart parts, not descending into attached messages (their parts are theirs)."""
    if part.get_content_type() == "message/rfc822":
        yield part
    elif part.is_multipart():
        for inner in part.get_payload():
            yield from _leaf_parts(inner)
    else:
        yield part


def _outlook_attachments(data: bytes) -> list[EmbeddedFile]:
    from oxmsg import Message

    try:
        message = Message.load(io.BytesIO(data))
        attachments = list(message.attachments)
    except Exception:  # a damaged MSG: the parent's own decode reports it
        return []
    found = []
    for attachment in attachments:
        try:
            payload = attachment.file_bytes
        except Exception:  # one damaged attachment: the others are still read
            payload = None
        if payload:
            found.append(EmbeddedFile(path=f"attachment {len(found) + 1}", name=clean_name(attachment.file_name),
                                      data=payload))
    return found
