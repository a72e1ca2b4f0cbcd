-- An ask may say `sign_in: "required"` (issue 31): its page is answered only by the person
-- its link is for, signed in through an e-mailed link, so `answered_by` is a signed-in identity
-- rather than whoever holds the link.
ALTER TABLE pages ADD COLUMN sign_in_required BOOLEAN NOT NULL DEFAULT FALSE;
