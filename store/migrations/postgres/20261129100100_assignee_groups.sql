-- Groups (issue 31): a group asked as one assignee gives each member a `page_assignees` row of
-- their own (their own link), naming the group here; the group's first answer is its one vote.
ALTER TABLE page_assignees ADD COLUMN assignee_group TEXT;
