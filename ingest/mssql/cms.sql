/*
cms.sql - restorewatch live collector: the instance list of a Central
Management Server.

The servers registered on the CMS under the Database Engine root, with the
path of the group each sits in ("Production/Billing"). The collector keeps
those whose path is the configured group or below it. Needs membership of
ServerGroupReaderRole in msdb on the CMS (or db_datareader). No parameters.

server_name is what was typed into SSMS: HOST, HOST\INSTANCE, HOST,PORT,
tcp:HOST,PORT. UNVERIFIED here: that the Database Engine root group is the
system group of server_type 0 with no parent (as on the instances seen in
public scripts); a CMS that differs returns no rows, not wrong ones.
*/

-- restorewatch:cms
WITH groups AS (
    SELECT g.server_group_id, CONVERT(nvarchar(4000), N'') AS group_path
    FROM msdb.dbo.sysmanagement_shared_server_groups AS g
    WHERE g.server_type = 0 AND g.parent_id IS NULL
    UNION ALL
    SELECT c.server_group_id,
           CONVERT(nvarchar(4000), CASE WHEN p.group_path = N'' THEN c.name
                                        ELSE p.group_path + N'/' + c.name END)
    FROM msdb.dbo.sysmanagement_shared_server_groups AS c
    JOIN groups AS p ON c.parent_id = p.server_group_id
)
SELECT s.name, s.server_name, gp.group_path
FROM msdb.dbo.sysmanagement_shared_registered_servers AS s
JOIN groups AS gp ON gp.server_group_id = s.server_group_id
WHERE s.server_type = 0
ORDER BY gp.group_path, s.name;
